"""``wnaudit.watch``: record the reparametrized weights a model computes while it runs (WN206, WN207).

A context manager and a decorator.  Importing this module does not import torch (the pytest plugin imports
it in every run); entering a watch does.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import Any

from ..common.findings import Finding

logger = logging.getLogger("wnaudit.runtime")


class Watch(contextlib.ContextDecorator):
    """Records, in the threads that enter it, every reparametrized weight computed until it is left.

    Entering it again (a nested ``with`` on the same object, a decorated function called again) adds to the
    same record; ``findings`` and ``computations`` may be read at any time, inside the block or after it.
    Only the threads that entered the watch are seen: torch runs dispatch modes per thread, so a forward
    that another thread runs meanwhile is not recorded (enter the watch in that thread too).
    """

    def __init__(self, model: Any | None = None):
        self.model = model
        self._lock = threading.Lock()
        self._recorder: Any = None
        self._activations: dict[int, Any] = {}

    def __enter__(self) -> Watch:
        from .mode import Activation
        from .recorder import Recorder

        ident = threading.get_ident()
        with self._lock:
            if self._recorder is None:
                self._recorder = Recorder(self.model)
            activation = self._activations.get(ident)
            if activation is None:
                activation = self._activations[ident] = Activation(self._recorder)
        if activation.depth == 0:
            try:
                activation.start()
            except BaseException:
                with self._lock:
                    del self._activations[ident]
                raise
        activation.depth += 1
        return self

    def __exit__(self, *exc_info: object) -> None:
        ident = threading.get_ident()
        with self._lock:
            activation = self._activations[ident]
            activation.depth -= 1
            if activation.depth:
                return
            del self._activations[ident]
            last = not self._activations
        activation.stop()
        if last:
            self._recorder.release()
        if logger.isEnabledFor(logging.INFO):
            for found in self.findings:
                logger.info("%s %s: %s", found.code, found.object, found.message)

    @property
    def computations(self) -> list[Any]:
        """One :class:`~wnaudit.runtime.recorder.Computation` per tensor, in the order first seen."""
        return [] if self._recorder is None else list(self._recorder.computations())

    @property
    def findings(self) -> list[Finding]:
        """One WN206 or WN207 finding per tensor, in the order first seen."""
        return [computation.finding for computation in self.computations]


def watch(model: Any | None = None) -> Watch:
    """Watch the calls made inside a ``with`` block (or a decorated function) for reparametrized weights.

    ``model`` names the tensors (``ups.0.weight``); without it they are named from the outermost module
    being called.  Results are never changed: every operator runs as it would without the watch.

    The ``with`` statement gives the :class:`Watch`: its ``findings`` lists one ``Finding`` per weight
    (WN206, WN207; empty for a folded model) and ``computations`` how often each was computed::

        with wnaudit.watch(model) as watched:
            model(mel)
        assert watched.findings == []
    """
    return Watch(model)
