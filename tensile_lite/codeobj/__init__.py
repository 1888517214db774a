"""Toolchain discovery, assembling, linking and the parallel code-object build."""
