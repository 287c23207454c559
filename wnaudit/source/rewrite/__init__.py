"""The libcst side of ``--fix``: call edits the rules' fixes are written in, and the file-level rewrite.

Only fixes and diffs import this package (and with it libcst); the lint runs
on ``ast`` alone.  ``calls`` is the vocabulary of call edits, ``support``
adds what a fixed call needs (``import torch``, the both-spellings helpers),
``imports`` drops the imports a fix orphaned, and ``transform`` applies the
rules' fixes to one file.
"""
