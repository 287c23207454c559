"""The source entrance as stages, one module each, in the order data flows.

``inputs`` (the files of the run, notebook views) -> ``read`` (bytes) ->
``prefilter`` (can these bytes hold a finding?) -> ``analyse`` (per-file facts,
in the ``-j`` workers by ``scan``) -> ``link`` (the workspace: imports,
classes, constructions across files) -> ``run_rules`` (candidates,
suppressions) -> ``plan`` (every edit across files, with its applicability)
-> ``apply`` (one transaction across files) -> ``collect`` (findings in
report order, re-linted from the disk after a fix).  ``wnaudit.source.engine`` runs them in that order
(``wnaudit.source.lint_run.lint_files`` gives a kept answer instead, when one holds).
Nothing is imported here: each stage imports only the stages before it.
"""
