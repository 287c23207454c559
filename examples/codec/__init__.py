"""A small audio codec package: layers in one module, the decoder in another.

The weight norm is applied in ``layers.py`` (modern spelling) and removed in
``decoder.py`` with the legacy remover: wnaudit resolves the class across
the package's imports (WN101 in decoder.py).
"""
