"""A custom kernel as the build sees it: the gate's verdict and the pipeline's kernel source.

The file is assembled exactly as it is (upstream copies it into its assembly folder and assembles it,
`_getKernelObjectAssemblyFile` in tensilelite/Tensile/KernelWriter.py, hipBLASLt 7d9fb683): its own symbol,
descriptor and metadata (with the custom.config block) go into the code object under the kernel's name.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import attrs

from tensile_lite.errors import BuildError
from tensile_lite.model.solution import CustomSource
from tensile_lite.model.verdict import Accepted


@attrs.frozen(slots=True)
class CustomBuild(Accepted):
    """The support gate's verdict on a solution whose custom kernel was found and read: built from its
    file, whatever the GEMM writer supports."""

    source: CustomSource


@attrs.frozen(slots=True)
class CustomKernel:
    """A KernelSource whose text is the custom kernel's file, checked against the digest taken when the
    logic was read (a file edited during the build is an error, never a silently different kernel). It
    has no `cache_identity`: the kernel cache keys it by its text, which is the file."""

    name: str
    arch: str
    source: CustomSource
    code_object_version: int = 4

    def assembly_text(self) -> str:
        path = Path(self.source.path)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise BuildError(f"custom kernel {path} cannot be read: {exc.strerror or exc}") from None
        if hashlib.sha256(data).hexdigest() != self.source.sha256:
            raise BuildError(f"custom kernel {path} changed while the library was being built")
        return data.decode("utf-8")
