"""`python -m Tensile.TensileCreateLibrary`: the ROCm 7.0-7.2 invocation (__main__.py)."""
