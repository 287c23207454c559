"""``python -m wnaudit``: the same as the ``wnaudit`` console script (and ``python -m wnaudit.cli``)."""

from .cli.command import main

main(prog_name="wnaudit")
