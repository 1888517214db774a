"""Find the LLVM toolchain (clang with the AMDGPU backend, ld.lld) and run it.

Search order (first hit wins): explicit paths or TENSILE_ROCM_ASSEMBLER_PATH; ROCM_PATH/llvm/bin;
/opt/rocm/llvm/bin; Debian's clang-22/ld.lld-22; clang-19/ld.lld-19.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

import attrs

from tensile_lite.errors import ToolchainError

_INSTALL_HINT = "install one with: apt-get install -y clang-22 lld-22 llvm-22 (or set ROCM_PATH)"


@attrs.frozen(slots=True)
class Toolchain:
    assembler: Path
    linker: Path
    version: tuple[int, int, int]
    found_by: str

    @property
    def bin_dir(self) -> Path:
        return self.assembler.parent

    def tool(self, name: str) -> Path | None:
        """A sibling LLVM tool (llvm-objdump, llvm-readelf...) with or without the Debian suffix."""
        suffix = _debian_suffix(self.assembler.name)
        for cand in (f"{name}{suffix}", name):
            p = self.bin_dir / cand
            if p.exists():
                return p
            hit = shutil.which(cand)
            if hit:
                return Path(hit)
        return None

    def describe(self) -> str:
        v = ".".join(map(str, self.version))
        return f"LLVM {v} ({self.assembler}, found by {self.found_by})"


def _debian_suffix(name: str) -> str:
    m = re.search(r"(-\d+)$", name)
    return m.group(1) if m else ""


def _version_of(clang: Path) -> tuple[int, int, int]:
    try:
        out = subprocess.run([str(clang), "--version"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        raise ToolchainError(f"cannot run {clang} --version: {exc}") from exc
    m = re.search(r"version (\d+)\.(\d+)\.(\d+)", out)
    if not m:
        raise ToolchainError(f"cannot read the version of {clang}: {out.strip()[:200]}")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def _candidates(assembler: str | None, linker: str | None, env: Mapping[str, str]):
    explicit = assembler or env.get("TENSILE_ROCM_ASSEMBLER_PATH")
    if explicit:
        asm = Path(explicit)
        lld = Path(linker) if linker else asm.parent / ("ld.lld" + _debian_suffix(asm.name))
        yield asm, lld, "--assembler" if assembler else "TENSILE_ROCM_ASSEMBLER_PATH"
        return
    rocm = env.get("ROCM_PATH") or env.get("TENSILE_ROCM_PATH")
    if rocm:
        yield Path(rocm) / "llvm/bin/clang++", Path(rocm) / "llvm/bin/ld.lld", "ROCM_PATH"
    yield Path("/opt/rocm/llvm/bin/clang++"), Path("/opt/rocm/llvm/bin/ld.lld"), "/opt/rocm"
    for ver in ("22", "19"):
        clang = shutil.which(f"clang-{ver}")
        lld = shutil.which(f"ld.lld-{ver}")
        if clang and lld:
            yield Path(clang), Path(linker) if linker else Path(lld), f"clang-{ver} on PATH"


def find_toolchain(
    assembler: str | None = None, linker: str | None = None, env: Mapping[str, str] | None = None
) -> Toolchain:
    """The first usable toolchain in the documented order, or a ToolchainError saying what to install."""
    env = os.environ if env is None else env
    tried = []
    for asm, lld, how in _candidates(assembler, linker, env):
        if asm.is_file() and os.access(asm, os.X_OK):
            if not (lld.is_file() and os.access(lld, os.X_OK)):
                raise ToolchainError(f"assembler {asm} ({how}) found but no linker at {lld}; pass --linker")
            return Toolchain(asm, lld, _version_of(asm), how)
        tried.append(f"{asm} ({how})")
        if how in ("--assembler", "TENSILE_ROCM_ASSEMBLER_PATH"):
            raise ToolchainError(f"assembler {asm} given by {how} does not exist or is not executable")
    raise ToolchainError("no LLVM toolchain with the AMDGPU backend found; tried " + ", ".join(tried)
                         + "; " + _INSTALL_HINT)
