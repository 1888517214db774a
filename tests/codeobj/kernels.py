"""Kernel sources for the pipeline tests (module-level, so worker processes can unpickle them)."""

from __future__ import annotations

import attrs

from tensile_lite.codeobj.trivial import TrivialKernel


@attrs.frozen(slots=True)
class BrokenKernel:
    """A trivial kernel with one invalid instruction just before `s_endpgm`."""

    name: str
    arch: str
    bad_line: str = "v_bogus_op v1, v2"

    def assembly_text(self) -> str:
        return TrivialKernel(self.name, self.arch).assembly_text().replace(
            "  s_endpgm\n", f"  {self.bad_line}\n  s_endpgm\n", 1)


@attrs.frozen(slots=True)
class RaisingKernel:
    """A kernel whose generator fails, as a buggy kernel writer would."""

    name: str
    arch: str

    def assembly_text(self) -> str:
        raise ValueError("unsupported parameter MT1=7")


@attrs.frozen(slots=True)
class UnpicklableKernel:
    """Holds a lambda, so it cannot travel to a worker process."""

    name: str
    arch: str
    render: object = attrs.field(factory=lambda: (lambda: ""))

    def assembly_text(self) -> str:
        return TrivialKernel(self.name, self.arch).assembly_text()
