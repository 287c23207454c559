"""An audit imports what reading its file needs, not the machinery that writes a fold.

A walked tree often holds one small checkpoint beside its source (a mel sample,
a test fixture): a warm lint of that tree gives the source's kept answer in
milliseconds, and then paid about 5 ms more to import the shard transaction,
the fold, the read-back verifiers and the atomic writer for a file it only reads.
Each case runs in a fresh interpreter, so that what another test imported does
not hide an import.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

#: Modules only a fix (or a sharded checkpoint) needs.
_WRITING = (
    "wnaudit.checkpoint.shards", "wnaudit.checkpoint.transaction", "wnaudit.checkpoint.verify",
    "wnaudit.checkpoint.torch_zip", "wnaudit.common.atomic", "wnaudit.common.write_bound",
    "wnaudit.core.state_dict_fold",
)

_DRIVER = r"""
import json, sys
from pathlib import Path
from wnaudit.checkpoint.audit import audit_checkpoints
from wnaudit.common.config import Config
from wnaudit.common.options import RunOptions
result = audit_checkpoints([Path(p) for p in sys.argv[1:]], RunOptions(config=Config()))
print(json.dumps({"codes": sorted(f.code for f in result.findings), "errors": [e.message for e in result.errors],
                  "modules": sorted(m for m in sys.modules if m.startswith("wnaudit.") or m == "torch")}))
"""


def _audit(*paths: Path) -> dict[str, list[str]]:
    done = subprocess.run([sys.executable, "-c", _DRIVER, *map(str, paths)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def torch_zip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("zip") / "vocoder.pt"
    torch.save(nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 2, 3)).state_dict(), path)
    return path


def test_auditing_a_torch_zip_imports_no_writer(torch_zip: Path) -> None:
    audited = _audit(torch_zip)
    assert audited["codes"] == ["WN301"] and audited["errors"] == []
    assert [name for name in _WRITING if name in audited["modules"]] == []
    assert "torch" not in audited["modules"]  # read from data.pkl alone


def test_auditing_safetensors_imports_its_reader_and_no_writer(tmp_path: Path) -> None:
    from safetensors.torch import save_file

    path = tmp_path / "vocoder.safetensors"
    save_file(dict(nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 2, 3)).state_dict()), str(path))
    audited = _audit(path)
    assert audited["codes"] == ["WN301"] and audited["errors"] == []
    assert "wnaudit.checkpoint.safetensors_io" in audited["modules"]
    assert [name for name in _WRITING if name in audited["modules"]] == []


def test_a_shard_index_still_covers_its_shards(tmp_path: Path) -> None:
    """The shard machinery, now imported only for an index, still audits each shard once, through it."""
    from safetensors.torch import save_file

    state = dict(nn.utils.parametrizations.weight_norm(nn.Conv1d(2, 2, 3)).state_dict())
    names = sorted(state)
    shards = {"model-00001-of-00002.safetensors": names[:1], "model-00002-of-00002.safetensors": names[1:]}
    for shard, keys in shards.items():
        save_file({key: state[key] for key in keys}, str(tmp_path / shard))
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {}, "weight_map": {key: shard for shard, keys in shards.items() for key in keys}}))
    audited = _audit(index, *(tmp_path / shard for shard in shards))
    assert audited["codes"] == ["WN301"] and audited["errors"] == []
    assert "wnaudit.checkpoint.shards" in audited["modules"]
