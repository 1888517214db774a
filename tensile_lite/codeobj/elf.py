"""Read an AMDGPU code object (or object) back: kernels, their descriptors and metadata. A code object
inside an offload bundle, compressed or not (ROCm 7.x `.co` files), is read through bundle.py.

Used after linking to prove every expected kernel made it into the library, and by other parts of
tensile-lite (emulator, library checks) that need a kernel's descriptor or metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs
import msgpack
from elftools.common.exceptions import ELFError
from elftools.elf.elffile import ELFFile
from elftools.elf.sections import NoteSection, SymbolTableSection

from tensile_lite.codeobj.bundle import PLAIN_ELF, open_code_object
from tensile_lite.errors import BuildError

NT_AMDGPU_METADATA = 32
KERNEL_DESCRIPTOR_SIZE = 64
# EI_ABIVERSION of ELFOSABI_AMDGPU_HSA code objects -> code object version.
_ABI_TO_COV = {1: 3, 2: 4, 3: 5, 4: 6}


@attrs.frozen(slots=True)
class KernelInfo:
    """One kernel of a code object. `metadata` is its entry of `amdhsa.kernels` (treat as read-only)."""

    name: str
    descriptor: bytes
    metadata: Mapping[str, Any] = attrs.field(factory=dict, hash=False)
    code_size: int = 0
    has_symbol: bool = True


@attrs.frozen(slots=True)
class CodeObjectInfo:
    path: Path
    code_object_version: int | None
    target: str
    metadata_version: tuple[int, ...]
    kernels: tuple[KernelInfo, ...]
    # Every distinct amdhsa.version among the notes (a linked library has one note per object).
    metadata_versions: tuple[tuple[int, ...], ...] = ()
    container: str = PLAIN_ELF  # what the file is: plain ELF or an offload bundle holding it (bundle.py)

    def names(self) -> tuple[str, ...]:
        return tuple(k.name for k in self.kernels)

    def kernel(self, name: str) -> KernelInfo:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)


def _metadata(elf: ELFFile) -> list[dict[str, Any]]:
    """Every NT_AMDGPU_METADATA note; a linked library holds one per object it was made from."""
    docs = []
    for section in elf.iter_sections():
        if not isinstance(section, NoteSection):  # SHT_NOTE sections
            continue
        for note in section.iter_notes():
            if note.n_name == "AMDGPU" and note.n_type == NT_AMDGPU_METADATA:
                desc = note.n_desc
                raw = desc if isinstance(desc, bytes) else bytes(desc, "latin-1")
                docs.append(msgpack.unpackb(raw, raw=False, strict_map_key=False))
    return docs


def read_code_object(path: Path) -> CodeObjectInfo:
    """Parse `path`, plain ELF or an offload bundle holding one; a file that is neither, or not an AMDGPU
    code object, gives a BuildError naming it."""
    path = Path(path)
    try:
        stream, holder = open_code_object(path)
        with stream as f:
            elf = ELFFile(f)
            if elf.header.e_machine != "EM_AMDGPU":
                raise BuildError(f"{path} is not an AMDGPU code object (machine {elf.header.e_machine})")
            cov = _ABI_TO_COV.get(elf.header.e_ident["EI_ABIVERSION"])
            docs = _metadata(elf)
            symtab = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
            funcs: dict[str, int] = {}
            descriptors: dict[str, bytes] = {}
            for sym in symtab.iter_symbols() if isinstance(symtab, SymbolTableSection) else ():
                kind = sym.entry.st_info.type
                if kind == "STT_FUNC":
                    funcs[sym.name] = sym.entry.st_size
                elif kind == "STT_OBJECT" and sym.name.endswith(".kd"):
                    section = elf.get_section(sym.entry.st_shndx)
                    # ET_DYN symbols hold addresses, ET_REL section offsets; sh_addr is 0 for the latter.
                    off = sym.entry.st_value - section.header.sh_addr
                    descriptors[sym.name[:-3]] = section.data()[off:off + sym.entry.st_size]
    except (OSError, ELFError) as exc:
        raise BuildError(f"cannot read code object {path}: {exc}") from exc

    meta: dict[str, Mapping[str, Any]] = {}
    target = ""
    versions: list[tuple[int, ...]] = []
    for doc in docs:
        target = target or str(doc.get("amdhsa.target", ""))
        v = tuple(doc.get("amdhsa.version", ()))
        if v not in versions:
            versions.append(v)
        for k in doc.get("amdhsa.kernels", ()):
            meta[str(k.get(".name", ""))] = k
    names = sorted(set(descriptors) | set(meta))
    kernels = tuple(KernelInfo(n, descriptors.get(n, b""), meta.get(n, {}), funcs.get(n, 0), n in funcs)
                    for n in names)
    return CodeObjectInfo(path, cov, target, versions[0] if versions else (), kernels,
                          tuple(sorted(versions)), holder)


def missing_kernels(info: CodeObjectInfo, expected: Iterable[str]) -> dict[str, str]:
    """Expected kernel -> what is wrong with it (no symbol, no or short `.kd`, no metadata)."""
    have = {k.name: k for k in info.kernels}
    problems = {}
    for name in expected:
        k = have.get(name)
        if k is None:
            problems[name] = "absent"
        elif not k.has_symbol:
            problems[name] = "no kernel symbol"
        elif len(k.descriptor) != KERNEL_DESCRIPTOR_SIZE:
            problems[name] = f"kernel descriptor {name}.kd has {len(k.descriptor)} bytes, not 64"
        elif not k.metadata:
            problems[name] = "no entry in .amdgpu_metadata"
    return problems


def check_kernels(info: CodeObjectInfo, expected: Iterable[str]) -> None:
    """Fail the build when a kernel the library's `.dat` names is not complete in its `.co`."""
    problems = missing_kernels(info, expected)
    if problems:
        shown = "; ".join(f"{n}: {why}" for n, why in sorted(problems.items())[:5])
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise BuildError(f"{info.path} is missing {len(problems)} expected kernel(s): {shown}{more}")
