"""The benchmark's one error type (torch-free, so the command can catch it cheaply)."""


class BenchError(RuntimeError):
    """The benchmark cannot run, or would measure something meaningless."""
