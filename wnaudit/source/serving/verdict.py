"""WN110's verdict for one application of weight norm, as the record of derived answers keeps it.

Apart from the fact kinds (``facts/kinds.py``, which import the model): a warm
run parses the record, verdicts included, before it knows whether it needs any stage.
"""

from __future__ import annotations

from typing import Any, NamedTuple


class Verdict(NamedTuple):
    """WN110's answer for one application: where the model is served unfolded (all a finding needs)."""

    file: str  # the serving file
    line: int
    what: str  # the inference site as the message quotes it
    target: str  # the model as written there
    kind: str  # "mode", "capture" or "call" (``serving.facts.Use.kind``)
    uncalled: str  # ``Class.method`` of a removal method nothing calls ("": none)
    where: str  # the inference site as the message names it (``path:line`` relative to the project; ``path:cell N:line``)
    why: str = ""  # why a candidate fold does not count (``index.Served.why``)
    method: str = ""  # a removal method of the served model that folds all of it, for the fix ("": none)
    imported: bool = False  # the serving file's project already imports wnaudit (outside its tests)
    #: Why the fix has no safe point for the fold ("": it has; ``serving/fold_point.py``), kept so a warm run never
    #: parses the serving file: it rests on that file's bytes, a ``serving_reads`` observation like the verdict.
    no_fold: str = ""
    #: Further inference sites no fold covers, each a verdict's fields without ``others``: every site
    #: the rule knows of is folded by the fix or reported.
    others: tuple[tuple[Any, ...], ...] = ()

    def all_sites(self) -> list[Verdict]:
        """This verdict and one per further site (as stored: tuples, or lists once read back from JSON)."""
        return [self._replace(others=()), *(Verdict(*other[:11]) for other in self.others)]
