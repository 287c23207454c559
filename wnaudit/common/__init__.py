"""What every layer shares: the finding model, run options and config, atomic writes.

Torch-free and entrance-free: the core, the entrances, the report and the CLI
all import from here; this package imports none of them.
"""
