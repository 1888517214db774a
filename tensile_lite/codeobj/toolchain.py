"""Find the LLVM toolchain (clang with the AMDGPU backend, ld.lld) and run it.

Search order (first hit wins): explicit paths or TENSILE_ROCM_ASSEMBLER_PATH; ROCM_PATH/llvm/bin;
/opt/rocm/llvm/bin; Debian's clang-22/ld.lld-22; clang-19/ld.lld-19.

What each target needs is in `targets.py`; `Toolchain.check_target` compares it with the version found,
and `probe.py` verifies it against the real assembler once per toolchain (cached by `fingerprint`).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

from tensile_lite.errors import ToolchainError
from tensile_lite.targets import Target, get_target

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

    def fingerprint(self) -> str:
        """A hex digest that changes whenever the tools that make our code objects change.

        It hashes the content of the assembler and linker binaries and their full version text.
        Debian's clang is a small driver whose AMDGPU backend lives in libLLVM, so the LLVM shared
        libraries next to it are added by name, size and mtime (hashing ~150 MB at every start
        would cost more than the probe it saves).
        """
        h = hashlib.sha256()
        for tool in (self.assembler, self.linker):
            real = tool.resolve()
            h.update(str(real).encode() + b"\0")
            with real.open("rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
        h.update(version_text(self.assembler).encode())
        lib_dir = self.assembler.resolve().parent.parent / "lib"
        if lib_dir.is_dir():
            for lib in sorted(lib_dir.glob("lib*.so*")):
                if lib.name.startswith(("libLLVM", "libclang-cpp", "liblld")) and lib.is_file():
                    st = lib.stat()
                    h.update(f"{lib.name}:{st.st_size}:{st.st_mtime_ns}\0".encode())
        return h.hexdigest()

    def check_target_ok(self, arch: str) -> bool:
        return get_target(arch).supported_by_llvm(self.version[0])

    def check_target(self, arch: str) -> Target:
        """The target's table row if this toolchain's LLVM version can handle it, else a ToolchainError
        naming the toolchain, its version, the target and what to install."""
        info = get_target(arch)
        major = self.version[0]
        if info.supported_by_llvm(major):
            return info
        raise ToolchainError(unsupported_message(self, info))


def unsupported_message(toolchain: Toolchain, info: Target, detail: str = "") -> str:
    """Why `toolchain` cannot build `info.gfx` and what to install instead (`detail`: the probe's output)."""
    major = toolchain.version[0]
    if info.llvm_max is not None and major > info.llvm_max:
        fix = (f"LLVM {info.llvm_max + 1} removed {info.gfx}; point --assembler or "
               f"TENSILE_ROCM_ASSEMBLER_PATH at an LLVM {info.llvm_min}..{info.llvm_max} clang "
               f"(e.g. apt-get install -y clang-19 lld-19)")
    else:
        fix = (f"{info.gfx} needs {info.llvm_range()} with the AMDGPU backend; install one "
               f"(apt-get install -y clang-22 lld-22, or ROCm and set ROCM_PATH)")
    why = f" ({detail})" if detail else ""
    return f"toolchain {toolchain.describe()} cannot assemble {info.gfx}{why}; {fix}"


def _debian_suffix(name: str) -> str:
    m = re.search(r"(-\d+)$", name)
    return m.group(1) if m else ""


_VERSION_TIMEOUT = 60.0  # seconds; `clang --version` answers in milliseconds unless something is wrong


def version_text(clang: Path) -> str:
    try:
        return subprocess.run([str(clang), "--version"], capture_output=True, text=True, check=True,
                              timeout=_VERSION_TIMEOUT).stdout
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"{clang} --version did not answer within {_VERSION_TIMEOUT:g} s") from None
    except (OSError, subprocess.CalledProcessError, UnicodeDecodeError) as exc:
        raise ToolchainError(f"cannot run {clang} --version: {exc}") from None


def _version_of(clang: Path) -> tuple[int, int, int]:
    out = version_text(clang)
    m = re.search(r"version (\d+)\.(\d+)\.(\d+)", out)
    if not m:
        raise ToolchainError(f"cannot read the version of {clang}: {out.strip()[:200]}")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3)))


def _candidates(assembler: str | None, linker: str | None,
                env: Mapping[str, str]) -> Iterator[tuple[Path, Path, str]]:
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
        clang_found = shutil.which(f"clang-{ver}")
        lld_found = shutil.which(f"ld.lld-{ver}")
        if clang_found and lld_found:
            yield Path(clang_found), Path(linker) if linker else Path(lld_found), f"clang-{ver} on PATH"


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


def find_toolchain_for(
    arch: str, assembler: str | None = None, linker: str | None = None, env: Mapping[str, str] | None = None
) -> Toolchain:
    """The first toolchain in the documented order that can assemble `arch`.

    LLVM 21 removed gfx940/gfx941 while hipBLASLt still builds them by default, so a machine with both
    clang-22 and clang-19 builds gfx942 with the first and gfx940 with the second. An explicit assembler
    is never second-guessed: if it cannot do the target, that is the error.
    """
    env = os.environ if env is None else env
    first = find_toolchain(assembler, linker, env)
    if first.check_target_ok(arch) or assembler or env.get("TENSILE_ROCM_ASSEMBLER_PATH"):
        first.check_target(arch)
        return first
    for asm, lld, how in _candidates(None, linker, env):
        if asm.is_file() and os.access(asm, os.X_OK) and lld.is_file() and os.access(lld, os.X_OK):
            candidate = Toolchain(asm, lld, _version_of(asm), how)
            if candidate.check_target_ok(arch):
                return candidate
    first.check_target(arch)  # raises with what to install
    return first
