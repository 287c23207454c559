"""Per-file facts by kind: one store (``store.py``) decides hit or miss; each kind is declared once (``kinds.py``)."""
