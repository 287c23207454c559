"""Hypothesis: variations of the HiFT file are found, fixed once, and stay fixed."""

from __future__ import annotations

import ast
import os

from hypothesis import given, settings
from hypothesis import strategies as st

from wnaudit.source import fix_source, lint_source

#: The slowest property of the suite (each example lints, fixes and re-lints a vocoder file): a small budget by
#: default, so the suite stays within ten minutes on two cores; ``.ci/run`` sets 40 (docs/performance.md).
SLOW_PROPERTY_EXAMPLES = int(os.environ.get("WNAUDIT_SLOW_PROPERTY_EXAMPLES", "12"))

CHOICES = {
    "try": "try:\n    from torch.nn.utils.parametrizations import weight_norm as {wn}\nexcept ImportError:\n    from torch.nn.utils import weight_norm as {wn}\n",
    "hasattr": "{wn} = nn.utils.weight_norm\nif hasattr(nn.utils.parametrizations, 'weight_norm'):\n    {wn} = nn.utils.parametrizations.weight_norm\n",
    "getattr": "{wn} = getattr(nn.utils.parametrizations, 'weight_norm', nn.utils.weight_norm)\n",
    "modern": "from torch.nn.utils.parametrizations import weight_norm as {wn}\n",
}
REMOVERS = {
    "from": ("from torch.nn.utils import remove_weight_norm as {rm}\n", "{rm}({arg})"),
    "module": ("import torch.nn.utils as {rm}\n", "{rm}.remove_weight_norm({arg})"),
    "attr": ("", "nn.utils.remove_weight_norm({arg})"),
}
identifiers = st.sampled_from(["wn", "weight_norm", "WN", "norm_fn"])
removers = st.sampled_from(["rwn", "remove_wn", "U", "utils_"])


@st.composite
def vocoders(draw):
    wn, rm = draw(identifiers), draw(removers)
    choice = draw(st.sampled_from(sorted(CHOICES)))
    remover_import, remover_call = REMOVERS[draw(st.sampled_from(sorted(REMOVERS)))]
    layers = draw(st.integers(1, 3))
    comment = draw(st.sampled_from(["", "  # fold for inference", "  # noqa: WN999"]))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    indent = draw(st.sampled_from(["    ", "  ", "\t"]))
    lines = [
        "import torch.nn as nn",
        remover_import.format(rm=rm).rstrip("\n"),
        CHOICES[choice].format(wn=wn).rstrip("\n"),
        "",
        "class Vocoder(nn.Module):",
        f"{indent}def __init__(self):",
        f"{indent*2}super().__init__()",
        f"{indent*2}self.ups = nn.ModuleList([{wn}(nn.Conv1d(2, 2, 3)) for _ in range({layers})])",
        f"{indent*2}self.post = {wn}(nn.Conv1d(2, 2, 3))",
        "",
        f"{indent}def remove_weight_norm(self):",
        f"{indent*2}for layer in self.ups:",
        f"{indent*3}{remover_call.format(rm=rm, arg='layer')}{comment}",
        f"{indent*2}{remover_call.format(rm=rm, arg='self.post')}",
    ]
    text = "\n".join(lines).replace("\n\n\n", "\n\n") + "\n"
    return text.replace("\n", newline), choice


@settings(max_examples=SLOW_PROPERTY_EXAMPLES, deadline=None)
@given(vocoders())
def test_found_fixed_idempotent_and_clean(case):
    source, choice = case
    found = lint_source(source, "vocoder.py")
    assert [f.code for f in found] == ["WN101", "WN101"]
    fixed, done = fix_source(source, "vocoder.py")
    assert len(done) == 2
    ast.parse(fixed)
    assert lint_source(fixed, "vocoder.py") == []
    assert fix_source(fixed, "vocoder.py") == (fixed, [])
    if "\r\n" in source:
        assert fixed.count("\r\n") == fixed.count("\n")
    else:
        assert "\r" not in fixed
    helper = "_remove_weight_norm_any_spelling"
    assert (helper in fixed) is (choice != "modern")
    if "# fold for inference" in source:
        assert "# fold for inference" in fixed
