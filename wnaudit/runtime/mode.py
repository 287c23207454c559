"""The dispatch mode and the module-call hook through which a watch sees a thread's computations.

Both only observe: the mode runs every operator exactly as called and returns its result unchanged,
and the hook returns None (the module's inputs stay as they were).  What they saw goes to the
watch's :class:`~wnaudit.runtime.recorder.Recorder`.  torch is imported when a watch starts.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import Any

from ..core import torch_api
from .flow import ParameterFlow
from .recorder import Recorder

logger = logging.getLogger("wnaudit.runtime")


@functools.lru_cache(maxsize=1)
def _mode_class() -> type:
    base: Any = torch_api.dispatch_mode_class()

    class WatchMode(base):  # type: ignore[misc, valid-type]
        """Sees every aten operator the thread runs while it is active (torch keeps dispatch modes per thread)."""

        def __init__(self, activation: Activation):
            super().__init__()
            self.activation = activation

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            self.activation.operator(func, args, kwargs, out)
            return out

    return WatchMode


class Activation:
    """A watch entered on one thread: its dispatch mode, its module-call hook and what it follows for WN207."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.thread = threading.get_ident()
        self.depth = 0
        self._flow = ParameterFlow()
        self._mode: Any = _mode_class()(self)
        self._hook: Any = None
        self._failed = False

    def start(self) -> None:
        self._hook = torch_api.register_global_forward_pre_hook(self._module_call)
        try:
            self._mode.__enter__()
        except BaseException:
            self._hook.remove()
            raise

    def stop(self) -> None:
        try:
            self._mode.__exit__(None, None, None)
        finally:
            self._hook.remove()

    def operator(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], out: Any) -> None:
        if self._failed:
            return
        try:
            self.recorder.operator(self._flow, func, args, kwargs, out)
        except Exception:  # noqa: BLE001 - the watched call must go on, whatever the bookkeeping meets
            self._fail()

    def _module_call(self, module: Any, inputs: Any) -> None:
        # Module hooks are global: calls made by other threads are not this watch's (its mode does not see them).
        if self._failed or threading.get_ident() != self.thread:
            return
        try:
            self.recorder.module_call(module)
        except Exception:  # noqa: BLE001 - as above
            self._fail()

    def _fail(self) -> None:
        """Called from an ``except`` block: log the error once, record nothing more (never a wrong count)."""
        self._failed = True
        self.recorder.failed = True
        logger.warning("wnaudit.watch stopped recording after an internal error; its findings are incomplete", exc_info=True)  # noqa: LOG014
