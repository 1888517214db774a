"""What every verdict of the support gate that builds has in common, for the writer's plan
(`asm/gemm/support.Buildable`) and for a custom kernel's file (`custom.CustomBuild`) alike."""

from __future__ import annotations


class Accepted:
    """A verdict that builds: no reasons against it."""

    __slots__ = ()

    @property
    def reasons(self) -> tuple[str, ...]:
        return ()

    @property
    def details(self) -> tuple[str, ...]:
        return ()
