"""Kept for ``serving/index.py`` alone, which names the run's fact store by this old name (``facts/store.py``)."""

from .facts.store import FactStore

SummaryCache = FactStore

__all__ = ["SummaryCache"]
