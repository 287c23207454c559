"""The pytest plugin: every test inside a watch, and a test fails when it serves a live reparametrization.

Installed with wnaudit (entry point ``pytest11``), off unless asked for: ``pytest --wnaudit-watch``, or
``wnaudit_watch = true`` in the ini file.  Then a test during which a module in eval mode, or any module
under ``inference_mode``, computes a reparametrized weight (WN206) fails with the finding's text; training
forwards are left alone.  ``@pytest.mark.wnaudit_allow("f0_predictor", ...)`` allows the named submodules
(qualified names, a prefix on whole components), and the ``wnaudit_watch`` fixture yields the test's watch
(a watch of its own, over the test, when the plugin is off).

Importing this module, and running with the plugin off, never imports torch: a project without torch
pays nothing for having wnaudit installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ..core.exclusion import covers
from .codes import WN206
from .watch import Watch

FLAG = "--wnaudit-watch"
INI = "wnaudit_watch"
ALLOW_MARK = "wnaudit_allow"
_WATCH = pytest.StashKey[Watch]()


def pytest_addoption(parser: pytest.Parser) -> None:
    help_text = "run every test inside wnaudit.watch() and fail a test that serves a live reparametrization (WN206)"
    parser.getgroup("wnaudit").addoption(FLAG, action="store_true", default=False, dest=INI, help=help_text)
    parser.addini(INI, help_text, type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{ALLOW_MARK}(*names): submodules (qualified names, a prefix on whole components) whose reparametrized "
        "weights the wnaudit watch allows in this test",
    )


def active(config: pytest.Config) -> bool:
    return bool(config.getoption(INI) or config.getini(INI))


def _watch_of(item: pytest.Item) -> Watch:
    if _WATCH not in item.stash:
        item.stash[_WATCH] = Watch()
    return item.stash[_WATCH]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    if not active(item.config):
        return (yield)
    with _watch_of(item):
        result = yield  # a test that fails on its own fails with its own error
    failures = serving_failures(_watch_of(item), allowed_names(item))
    if failures:
        pytest.fail(failure_text(failures), pytrace=False)
    return result


@pytest.fixture
def wnaudit_watch(request: pytest.FixtureRequest) -> Iterator[Watch]:
    """The watch over this test: the plugin's when it is on, else one entered for the test's duration."""
    watch = _watch_of(request.node)
    if active(request.config):
        yield watch
        return
    with watch:
        yield watch


def allowed_names(item: pytest.Item) -> tuple[str, ...]:
    return tuple(str(name) for mark in item.iter_markers(ALLOW_MARK) for name in mark.args)


def is_allowed(qualified_name: str | None, allowed: tuple[str, ...]) -> bool:
    """``f0_predictor`` allows ``f0_predictor.condnet.0.weight``, not ``f0_predictor_2.weight`` (the partial fold's rule)."""
    name = qualified_name or ""
    return any(covers(prefix, name) for prefix in allowed)


def serving_failures(watch: Watch, allowed: tuple[str, ...]) -> list[Any]:
    """The WN206 computations made for serving (eval mode or inference_mode) outside the allowed submodules."""
    return [
        computation for computation in watch.computations
        if computation.code == WN206.code and computation.serving_calls and not is_allowed(computation.object, allowed)
    ]


def failure_text(failures: list[Any]) -> str:
    lines = [f"{found.finding.code} {found.finding.object}: {found.finding.message}" for found in failures]
    head = f"wnaudit: {len(failures)} reparametrized weight(s) computed for serving during this test"
    hint = f"(allow a submodule with @pytest.mark.{ALLOW_MARK}(\"name\"))"
    return "\n".join([f"{head} {hint}:", *lines])
