"""How construction code passes constants on: the facts the removal-target rules follow (WN109).

``SConv1d(..., norm="weight_norm")`` builds ``NormConv1d(..., norm=norm)``,
which builds ``apply_parametrization_norm(nn.Conv1d(...), norm)``; whether a
removal on the outer module raises depends on where that string leads.  The
analysis keeps, for the attributes a class builds, the functions made only of
tests and returns, and each ``__init__``'s parameters, a small tree of
``model.Value`` instead of the syntax tree: callees resolved to qualified
names, constants as ``repr`` writes them, parameters by name.  Everything
else is "unknown", which the rules read as "the code does not decide".

One module per job: ``values`` (slim copies and their ``Value``),
``conditions`` (tests on parameters and their verdicts), ``signatures``
(signatures, helpers made of tests and returns), ``arguments`` (what a
caller passes and the guards around it, for WN110).
"""

from __future__ import annotations

from .arguments import (
    Source, argument_sources, choice_tests, expression_sources, guard_tests, module_constants, parameter_defaults,
    reassigned,
)
from .conditions import dotted_name, is_literal, passes, tests_of
from .signatures import helper_returns, parameter_names, signature_of, with_defaults
from .values import CONTAINERS, UNKNOWN, UNKNOWN_NODE, NamesOf, slim_value, to_value

__all__ = [
    "CONTAINERS", "UNKNOWN", "UNKNOWN_NODE", "NamesOf", "Source", "argument_sources", "choice_tests", "dotted_name",
    "expression_sources", "guard_tests", "helper_returns", "is_literal", "module_constants", "parameter_defaults",
    "parameter_names", "passes", "reassigned", "signature_of", "slim_value", "tests_of", "to_value", "with_defaults",
]
