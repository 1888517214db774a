"""Epilogue features as objects: one module per feature (or a few related ones), `base.Feature` what
each declares, `order.FEATURES` the one ordered list every user walks. The package itself imports
nothing, so the argument list (abi.py) can read `base` without the emitting helpers."""
