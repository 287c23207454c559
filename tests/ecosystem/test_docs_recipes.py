"""The docs tell the truth: the generated rules reference is current, every
Python example runs, the documented log lines and messages are the real ones,
and the CI recipes are well-formed for their tools."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from ecosystem_helpers import REPO_ROOT

DOCS = REPO_ROOT / "docs"
EXECUTED_DOCS = ["getting-started.md", "python-api.md", "how-the-fold-works.md", "serving.md"]


def _blocks(markdown: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", markdown, flags=re.S | re.M)


def _doc(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def test_rules_reference_is_generated_and_current():
    proc = subprocess.run(
        [sys.executable, str(DOCS / "generate_rules_reference.py"), "--check"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    reference = _doc("rules.md")
    for page in sorted((REPO_ROOT / "rules").glob("WN*.md")):
        assert f'<a id="{page.stem.lower()}"></a>' in reference, page.stem


def test_rules_reference_check_detects_a_stale_reference(tmp_path: Path):
    """The --check really compares: an edited page makes the reference stale."""
    sys.path.insert(0, str(DOCS))
    try:
        import generate_rules_reference as generator
    finally:
        sys.path.remove(str(DOCS))
    rules = tmp_path / "rules"
    rules.mkdir()
    for page in (REPO_ROOT / "rules").glob("WN*.md"):
        (rules / page.name).write_text(page.read_text(encoding="utf-8"), encoding="utf-8")
    assert generator.render(rules) == _doc("rules.md")
    first = sorted(rules.glob("WN*.md"))[0]
    first.write_text(first.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    assert generator.render(rules) != _doc("rules.md")


@pytest.mark.parametrize("name", EXECUTED_DOCS)
def test_python_examples_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocks = _blocks(_doc(name), "python")
    assert blocks, f"{name} has no Python example"
    monkeypatch.chdir(tmp_path)  # examples may write files (serving.md saves a checkpoint)
    namespace: dict[str, object] = {"__name__": f"docs_{name}"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        for number, block in enumerate(blocks, 1):
            exec(compile(block, f"docs/{name} example {number}", "exec"), namespace)  # noqa: S102 - our own docs


def _pytest_recipe() -> str:
    [recipe] = [block for block in _blocks(_doc("ci.md"), "python") if "def test_" in block]
    return recipe


def test_ci_pytest_recipe_passes_on_a_folding_loader_and_fails_without_the_fold(tmp_path: Path):
    recipe = _pytest_recipe()
    without_fold = recipe.replace("    wnaudit.fold_weight_norm(model)\n", "")
    assert without_fold != recipe
    (tmp_path / "test_served_model.py").write_text(recipe, encoding="utf-8")
    (tmp_path / "test_unfolded_model.py").write_text(without_fold, encoding="utf-8")
    proc = subprocess.run(  # one real pytest run for both files: torch is imported once
        [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", "-W", "ignore::FutureWarning", "."],
        cwd=tmp_path,
        env=dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1"),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = proc.stdout + proc.stderr
    failed = re.findall(r"^FAILED (\S+)", proc.stdout, flags=re.M)
    assert failed == ["test_unfolded_model.py::test_served_model_has_no_live_weight_norm"], output
    assert re.search(r"\b1 failed, 3 passed\b", proc.stdout), output
    assert "WN201" in proc.stdout and "reparametrization leftover" in proc.stdout


def test_ci_documented_assertion_message_is_the_real_one():
    import wnaudit
    from wnaudit.testing.vocoder import build_vocoder

    documented = [block for block in _blocks(_doc("ci.md"), "text") if "AssertionError" in block][0].splitlines()
    with pytest.raises(AssertionError) as raised:
        wnaudit.assert_folded(build_vocoder(weight_norm="modern"))
    actual = f"AssertionError: {raised.value}".splitlines()
    assert documented[0] == actual[0]
    prefix = documented[1].removesuffix("...").rstrip()
    assert actual[1].startswith(prefix), (actual[1], prefix)


def _fold_log_lines(caplog: pytest.LogCaptureFixture, spelling: str) -> list[tuple[int, str]]:
    import wnaudit
    from wnaudit.testing.vocoder import build_vocoder

    model = build_vocoder(weight_norm=spelling)
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="wnaudit.fold"):
        wnaudit.fold_weight_norm(model)
        wnaudit.fold_weight_norm(model)
    return [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "wnaudit.fold"]


def test_serving_log_lines_are_the_real_ones(caplog: pytest.LogCaptureFixture):
    documented = [block.strip() for block in _blocks(_doc("serving.md"), "text")]
    (info_level, info), (warning_level, warning) = _fold_log_lines(caplog, "modern")
    assert (info_level, warning_level) == (logging.INFO, logging.WARNING)
    assert documented[:2] == [info, warning]
    assert "`wnaudit.fold`" in _doc("serving.md")


def test_python_api_legacy_log_line_is_the_real_one(caplog: pytest.LogCaptureFixture):
    (_, legacy), _ = _fold_log_lines(caplog, "legacy")
    assert f"`{legacy}`" in _doc("python-api.md")


def test_serving_recipe_order_is_load_place_fold():
    recipe = _blocks(_doc("serving.md"), "python")[0]
    positions = [recipe.index(marker) for marker in ("load_state_dict(", "strict=True", ".to(device)", "fold_weight_norm(")]
    assert positions == sorted(positions)


def test_github_workflow_recipe():
    import yaml

    [workflow] = [yaml.safe_load(block) for block in _blocks(_doc("ci.md"), "yaml") if "jobs:" in block]
    assert workflow["permissions"]["security-events"] == "write"
    steps = workflow["jobs"]["wnaudit"]["steps"]
    runs = [step.get("run", "") for step in steps]
    [sarif_run] = [run for run in runs if "--format sarif" in run]
    sarif_file = re.search(r">\s*(\S+)", sarif_run).group(1)
    [upload] = [step for step in steps if step.get("uses", "").startswith("github/codeql-action/upload-sarif@")]
    assert upload["with"]["sarif_file"] == sarif_file
    assert upload.get("if") == "always()"
    assert any(re.search(r"\bwnaudit --format github\b", run) for run in runs)
    assert steps.index(upload) < [i for i, run in enumerate(runs) if "--format github" in run][0], (
        "the failing annotation step must come after the upload"
    )


def test_pre_commit_recipe_names_real_hooks():
    import yaml
    from pre_commit.clientlib import load_manifest

    hook_ids = {hook["id"] for hook in load_manifest(str(REPO_ROOT / ".pre-commit-hooks.yaml"))}
    configs = [yaml.safe_load(block) for block in _blocks(_doc("ci.md"), "yaml") if "repos:" in block]
    used = {hook["id"] for config in configs for repo in config["repos"] for hook in repo["hooks"]}
    assert used and used <= hook_ids


def test_relative_links_resolve():
    for page in sorted(DOCS.glob("*.md")):
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / target).exists(), f"{page.name}: broken link to {target}"


def _console_output(markdown: str, command: str) -> list[str]:
    """The lines a ```console block shows under ``$ command``."""
    for block in _blocks(markdown, "console"):
        lines = block.splitlines()
        if f"$ {command}" in lines:
            start = lines.index(f"$ {command}") + 1
            end = next((i for i in range(start, len(lines)) if lines[i].startswith("$ ")), len(lines))
            return lines[start:end]
    raise AssertionError(f"no console block runs {command!r}")


def test_documented_outputs_are_the_real_ones(tmp_path: Path):
    from ecosystem_helpers import BUGGY_WN101, run_wnaudit

    (tmp_path / "vocoder").mkdir()
    (tmp_path / "vocoder" / "hifigan.py").write_text(BUGGY_WN101, encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "vocoder.py").write_text(BUGGY_WN101, encoding="utf-8")

    lint = run_wnaudit("vocoder/", cwd=tmp_path)
    assert lint.stdout.splitlines() == _console_output(_doc("getting-started.md"), "wnaudit vocoder/")

    flake8 = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "WN", "src/"], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    for document in (_doc("ci.md"), (REPO_ROOT / "README.md").read_text(encoding="utf-8")):
        assert flake8.stdout.splitlines() == _console_output(document, "flake8 --select WN src/")


def test_documented_checkpoint_output_is_the_real_one(tmp_path: Path):
    import torch

    from ecosystem_helpers import run_wnaudit
    from wnaudit.testing.vocoder import build_vocoder

    (tmp_path / "checkpoints").mkdir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.save({"generator": build_vocoder(weight_norm="legacy").state_dict()}, tmp_path / "checkpoints" / "g_00500000")
    actual = run_wnaudit("checkpoints/g_00500000", cwd=tmp_path).stdout.splitlines()
    # One line per checkpoint and code (issue 37): the whole output is quoted, as printed.
    assert actual == _console_output(_doc("getting-started.md"), "wnaudit checkpoints/g_00500000")
