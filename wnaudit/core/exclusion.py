"""Submodules left out of a partial fold (``exclude=``) or allowed by ``assert_folded(allow=)``.

A name is a submodule's qualified name; it covers that submodule and every
submodule below it, matched on whole components: ``f0`` covers ``f0.conv`` but
not ``f0_predictor``.  Coverage is decided by module identity, so a submodule
reachable under two names is left alone if either name is covered (folding it
would change the excluded path too).  A name that matches no submodule is an
error: a typo must not silently fold everything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable


class ExcludeError(ValueError):
    """An ``exclude=``/``allow=`` name matches no submodule of the model."""


def normalized_names(names: str | Iterable[str]) -> tuple[str, ...]:
    """One name or many; a single string is one name, not its characters."""
    return (names,) if isinstance(names, str) else tuple(names)


def covers(prefix: str, qualified_name: str) -> bool:
    """``prefix`` names ``qualified_name`` or one of its ancestors, on whole components."""
    return qualified_name == prefix or qualified_name.startswith(prefix + ".")


@dataclass(frozen=True)
class Exclusion:
    """Which modules of one model a set of names covers, and under which name."""

    names: tuple[str, ...] = ()
    _owner_names: dict[int, str] = field(default_factory=dict)

    @classmethod
    def of(cls, module: Any, names: str | Iterable[str], *, argument: str = "exclude") -> "Exclusion":
        """Resolve ``names`` in ``module``; raise :class:`ExcludeError` for one that names nothing."""
        wanted = normalized_names(names)
        if not wanted:
            return cls()
        every = list(module.named_modules(remove_duplicate=False))
        owners: dict[int, str] = {}
        for name in wanted:
            if not isinstance(name, str) or not name:
                raise ExcludeError(f"{argument}={name!r}: give the qualified name of a submodule, like 'f0_predictor'")
            matched = [sub for qualified, sub in every if covers(name, qualified)]
            if not matched:
                raise ExcludeError(
                    f"{argument}={name!r} names no submodule of {type(module).__name__}{_suggestion(name, every)}"
                )
            for sub in matched:
                owners.setdefault(id(sub), name)
        return cls(wanted, owners)

    def name_covering(self, owner: Any) -> str | None:
        """The listed name that covers ``owner``, or None when the fold may touch it."""
        return self._owner_names.get(id(owner))


def _suggestion(name: str, every: list[tuple[str, Any]]) -> str:
    import difflib

    names = sorted({qualified for qualified, _ in every if qualified})
    nested = [qualified for qualified in names if qualified.endswith("." + name)]  # a wrapper's prefix: _orig_mod.f0_predictor
    close = nested[:1] or difflib.get_close_matches(name, names, n=1)
    if close:
        return f"; did you mean {close[0]!r}?"
    top = sorted({qualified.split(".")[0] for qualified in names})[:8]
    return f" (its children: {', '.join(top)})" if top else " (it has no submodules)"
