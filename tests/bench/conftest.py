"""One torch thread for the bench tests: two threads on the 2-core CI machine,
shared with other test processes, make each convolution many times slower."""

from __future__ import annotations

from typing import Iterator

import pytest


@pytest.fixture(autouse=True)
def _one_torch_thread() -> Iterator[None]:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
