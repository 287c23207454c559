"""``python -m wnaudit.cli``: the same as the ``wnaudit`` console script."""

from .command import process_main

process_main()
