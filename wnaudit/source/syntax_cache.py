"""Kept for ``serving/index.py`` alone, which imports ``digest_of`` from here (``facts/kinds.py`` declares the kinds)."""

from ..common.cache import digest_of

__all__ = ["digest_of"]
