"""tensile-lite: a lean, deterministic rewrite of hipBLASLt's TensileCreateLibrary."""

__version__ = "0.1.0"
