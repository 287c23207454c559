"""``wnaudit probe``: call a project's own loader, audit the model it returns, and watch one inference call.

Not an entrance: it drives two of them on the project's model (the module
inspector for WN2xx, the runtime watch for WN206/WN207) and, with ``--fix``,
the source rewrite that puts the fold into the loader.  Like ``wnaudit bench``
it imports and runs project code, and only when the user runs it.
Importing this package imports neither torch nor the project.
"""
