"""The core: the catalogue of reparametrization spellings and the exact fold.

Everything the three entrances (source, checkpoint, module) know about torch's
weight-norm and spectral-norm APIs comes from here:

- ``catalogue``: the spellings as data (API paths, hook classes, key patterns);
- ``stored_keys``: which state-dict keys together store one tensor;
- ``shapes``: torch-free shape rules (run on safetensors headers too);
- ``live``: the reparametrizations live in a loaded module;
- ``module_fold``: the live-module fold; ``state_dict_fold``: the stored-state fold;
- ``load``: the one load contract (any checkpoint into any model, folded after);
- ``torch_api``: the one module that names torch internals.

Nothing here imports an entrance, a renderer or the command line, and only
``torch_api`` (lazily) imports torch.
"""
