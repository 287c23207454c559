"""Property: a file's findings depend only on the code: it, what it imports, and (WN110) its project.

hypothesis builds small packages (classes inheriting across modules, a
module choosing the spelling at import time, a flag choice of norm bound in
another module, removals in other modules)
and checks that every file's findings are the same linted alone, with its
package, with the whole tree, beside an unrelated tree of same-named
modules, and after comments and unrelated code are added to other files.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wnaudit.common.options import RunOptions
from wnaudit.source import lint_files, lint_source

NORMS = {
    "none": "",
    "modern": "from torch.nn.utils.parametrizations import weight_norm as norm{i}\n",
    "legacy": "from torch.nn.utils import weight_norm as norm{i}\n",
    "compat": "from .compat import weight_norm as norm{i}\n",
    "choice": "from .norms import norm_f as norm{i}\n",  # a flag choice bound in another module (WN103)
}
REMOVALS = {
    "none": "",
    "legacy": "from torch.nn.utils import remove_weight_norm\n\ndef fold{i}():\n    remove_weight_norm({cls}().conv)\n",
    "modern": "from torch.nn.utils.parametrize import remove_parametrizations\n\n"
    "def fold{i}():\n    remove_parametrizations({cls}().conv, 'weight')\n",
}
#: How a module uses a class of the package (WN110 reads these across the project).
USES = {
    "none": "",
    "serve": "\n\ndef serve{i}():\n    model = {cls}()\n    model.eval()\n    return model\n",
    "train": "import torch\n\n\ndef train{i}():\n    model = {cls}()\n    opt = torch.optim.SGD(model.parameters(), 0.1)\n"
    "    model.train()\n    model.eval()\n",
    "fold": "import wnaudit\n\n\ndef serve{i}():\n    model = {cls}()\n    wnaudit.fold_weight_norm(model)\n    return model.eval()\n",
    "method": "\n\ndef serve{i}():\n    model = {cls}()\n    model.fold()\n    return model.eval()\n",
}
COMPAT = (
    "try:\n    from torch.nn.utils.parametrizations import weight_norm\n"
    "except ImportError:\n    from torch.nn.utils import weight_norm\n"
)
CHOICE = (
    "from torch.nn.utils import spectral_norm, weight_norm\n\n"
    "USE_SPECTRAL_NORM = False\nnorm_f = weight_norm if not USE_SPECTRAL_NORM else spectral_norm\n"
)

module_spec = st.tuples(
    st.sampled_from(sorted(NORMS)),
    st.integers(min_value=-1, max_value=3),  # base: another module's class, or -1 for nn.Module
    st.sampled_from(sorted(REMOVALS)),
    st.integers(min_value=-1, max_value=3),  # whose class the removal targets
    st.booleans(),  # absolute or relative import
    st.sampled_from(sorted(USES)),
    st.integers(min_value=-1, max_value=3),  # whose class the use serves
    st.booleans(),  # the class has a fold() method removing its weight norm
)


def _module(i: int, spec: tuple, count: int) -> str:
    norm, base, removal, target, absolute, use, served, method = spec
    lines = ["import torch.nn as nn\n", NORMS[norm].format(i=i)]
    base_name = "nn.Module"
    if 0 <= base < i:
        lines.append(f"from {'pkg' if absolute else ''}.m{base} import C{base}\n")
        base_name = f"C{base}"
    applied = f"norm{i}(nn.Conv1d(2, 2, 3))" if norm != "none" else "nn.Conv1d(2, 2, 3)"
    noqa = "  # noqa: WN103" if norm == "legacy" else ""
    lines.append(
        f"\n\nclass C{i}({base_name}):\n    def __init__(self):\n        super().__init__()\n"
        f"        self.conv = {applied}{noqa}\n"
    )
    if method:
        lines.append("\n    def fold(self):\n        import torch\n        torch.nn.utils.parametrize.remove_parametrizations(self.conv, 'weight')\n")
    if removal != "none":
        cls = f"C{i}"
        if 0 <= target < count and target != i:
            lines.append(f"from {'pkg' if absolute else ''}.m{target} import C{target}\n")
            cls = f"C{target}"
        lines.append("\n" + REMOVALS[removal].format(i=i, cls=cls))
    if use != "none":
        cls = f"C{i}"
        if 0 <= served < count and served != i:
            lines.append(f"from {'pkg' if absolute else ''}.m{served} import C{served}\n")
            cls = f"C{served}"
        lines.append(USES[use].format(i=i, cls=cls))
    return "".join(lines)


def _write_tree(root: Path, specs: list[tuple]) -> list[Path]:
    package = root / "pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "compat.py").write_text(COMPAT)
    (package / "norms.py").write_text(CHOICE)
    files = []
    for i, spec in enumerate(specs):
        path = package / f"m{i}.py"
        path.write_text(_module(i, spec, len(specs)))
        files.append(path)
    return files


def _findings(paths: list[Path]) -> dict[str, list[tuple]]:
    out: dict[str, list[tuple]] = {}
    for item in lint_files(paths, RunOptions()).findings:
        out.setdefault(str(Path(item.path).resolve()), []).append((item.code, item.line, item.column, item.message))
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    specs=st.lists(module_spec, min_size=2, max_size=4),
    others=st.lists(module_spec, min_size=2, max_size=4),
)
@example(  # a subclass met as a carrier before it was known to be one (its instances were decided too early)
    specs=[("choice", 0, "legacy", 0, False, "fold", 0, False), ("choice", 0, "legacy", 0, False, "fold", 0, False),
           ("choice", 0, "legacy", 0, False, "method", 1, False), ("choice", 1, "legacy", 0, False, "fold", -1, False)],
    others=[("choice", 0, "legacy", 0, False, "fold", 0, False), ("choice", 0, "legacy", 0, False, "fold", 0, False)],
)
@example(  # a removal method called on an instance of a base class: not a fold of the subclass, whatever is linted
    specs=[("choice", 0, "legacy", 0, False, "fold", 0, False), ("choice", 0, "legacy", 0, False, "method", 0, True),
           ("choice", 0, "legacy", 0, False, "serve", 1, False)],
    others=[("choice", 0, "legacy", 0, False, "fold", 0, False), ("choice", 0, "legacy", 0, False, "fold", 0, False)],
)
def test_findings_of_a_file_depend_only_on_it_and_its_imports(specs, others):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        files = _write_tree(root / "project", specs)
        unrelated = _write_tree(root / "unrelated", others)  # same module names, other content
        package = [*files, *(root / "project" / "pkg" / name for name in ("compat.py", "norms.py", "__init__.py"))]
        with_package = _findings(package)
        whole = _findings([*package, *unrelated])
        for path in files:
            key = str(path.resolve())
            alone = _findings([path]).get(key, [])
            assert alone == with_package.get(key, []) == whole.get(key, [])
            via_api = [(f.code, f.line, f.column, f.message) for f in lint_source(path.read_text(), str(path))]
            assert via_api == alone
        # Comments and unrelated code elsewhere change nothing.
        for path in files[1:]:
            path.write_text(path.read_text() + "\n# weight_norm remove_weight_norm\n\ndef unrelated():\n    return 1\n")
        key = str(files[0].resolve())
        assert _findings([files[0]]).get(key, []) == with_package.get(key, [])
