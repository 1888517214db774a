"""Find the kernels of a built library: the master `.dat` of each architecture, the placeholder libraries
it names, their solutions grouped by kernel, and the code object each kernel lives in.

Every placeholder library is `<name>.dat` (or `.dat.zlib` / `.yaml`, whichever format the build used)
with `<name>.co` beside it, exactly as the runtime's lazy loading finds them. A master built without lazy
loading (`TensileLibrary_<gfx>`, 7.x) holds every solution itself, its kernels in `TensileLibrary_<gfx>.co`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import attrs

from tensile_lite.errors import Where
from tensile_lite.library.formats import FORMATS, DatError, file_name, read_dat
from tensile_lite.verify.errors import VerifyError
from tensile_lite.verify.integrity import DAMAGE, check_document
from tensile_lite.verify.runtime_view import MULTIPLE_BUFFER_SINGLE_KERNEL

_MASTER = re.compile(r"^TensileLibrary_(lazy_)?(gfx[0-9a-z]+)\.(dat|dat\.zlib|yaml)$")


@attrs.frozen(slots=True)
class LibraryKernel:
    """One kernel of a library: the solution that represents it and where its code is."""

    arch: str
    name: str
    entry: Mapping[str, Any] = attrs.field(hash=False, eq=False, repr=False)
    solutions: int  # how many solutions of the library use this kernel
    placeholder: str
    code_object: Path


def library_dir(outdir: str | Path) -> Path:
    """`OUTDIR/library`, or OUTDIR itself when it holds the master files."""
    root = Path(outdir)
    for candidate in (root / "library", root):
        if candidate.is_dir() and any(_MASTER.match(p.name) for p in candidate.iterdir()):
            return candidate
    raise VerifyError(f"no TensileLibrary_lazy_<gfx>.dat or TensileLibrary_<gfx>.dat in {root} or "
                      f"{root / 'library'}; "
                      "give the output folder of TensileCreateLibrary")


def masters(lib: Path) -> dict[str, Path]:
    """Architecture -> its master library file (the first format found, in the order of FORMATS)."""
    found: dict[str, Path] = {}
    for path in sorted(lib.iterdir()):
        m = _MASTER.match(path.name)
        if m and m.group(2) not in found:
            found[m.group(2)] = path
    return found


def _placeholders(node: Any) -> Iterator[str]:
    """Names of every Placeholder library node of a master document, in document order."""
    if isinstance(node, Mapping):
        if node.get("type") == "Placeholder" and isinstance(node.get("value"), str):
            yield node["value"]
        for value in node.values():
            yield from _placeholders(value)
    elif isinstance(node, list):
        for value in node:
            yield from _placeholders(value)


def _stem(path: Path) -> str:
    return path.name.split(".")[0]


def _placeholder_file(lib: Path, name: str) -> Path:
    for fmt in FORMATS:
        path = lib / file_name(name, fmt)
        if path.is_file():
            return path
    raise VerifyError(f"placeholder library {name} named by the master has no file (.dat, .dat.zlib or .yaml)",
                      Where(file=str(lib)))


def _read(path: Path) -> Any:
    """The document of `path`, checked: a damaged file is a VerifyError naming it, never a skip."""
    try:
        doc = read_dat(path)
        check_document(doc, path)
    except DatError as exc:  # the decoder knows only the file's name: name the path
        raise VerifyError(exc.message, Where(file=str(path))) from None
    except DAMAGE as exc:
        raise VerifyError(f"cannot be decoded ({type(exc).__name__}: {exc})", Where(file=str(path))) from None
    return doc


def _preferred(entry: Mapping[str, Any]) -> bool:
    """Whether a solution shows its kernel at its most demanding launch the verifier drives: split-K
    (globalAccumulation 3) kernels with GlobalSplitU > 1, the others with GlobalSplitU 1."""
    sm = entry.get("sizeMapping")
    if not isinstance(sm, Mapping):
        return False
    gsu = int(sm.get("globalSplitU", 1))
    return gsu > 1 if int(sm.get("globalAccumulation", 0)) == MULTIPLE_BUFFER_SINGLE_KERNEL else gsu == 1


def kernels(lib: Path, arch: str) -> list[LibraryKernel]:
    """The kernels of one architecture, sorted by name; each represented by its lowest-index solution,
    preferring one with GlobalSplitU > 1 for an in-kernel split-K kernel and 1 for the others."""
    master = masters(lib).get(arch)
    if master is None:
        raise VerifyError(f"no library for {arch} in {lib} (found: {', '.join(sorted(masters(lib))) or 'none'})")
    doc = _read(master)
    by_name: dict[str, list[tuple[Mapping[str, Any], str]]] = {}
    lazy = master.name.startswith("TensileLibrary_lazy_")
    # without lazy loading the master is its own (only) library, whose code object is named after it
    named = _placeholders(doc.get("library") if isinstance(doc, Mapping) else None) if lazy else [_stem(master)]
    for placeholder in dict.fromkeys(named):
        path = _placeholder_file(lib, placeholder) if lazy else master
        pdoc = _read(path) if lazy else doc
        solutions = pdoc.get("solutions") if isinstance(pdoc, Mapping) else None
        if not isinstance(solutions, list):
            raise VerifyError("not a placeholder library (no solutions list)", Where(file=str(path)))
        for n, sol in enumerate(solutions):
            if not isinstance(sol, Mapping) or not isinstance(sol.get("kernelName"), str):
                raise VerifyError(f"solution entry {n} has no kernelName", Where(file=str(path)))
            by_name.setdefault(sol["kernelName"], []).append((sol, placeholder))
    out = []
    for name in sorted(by_name):
        entries = by_name[name]
        # solutions of one kernel differ only in runtime arguments (GSU among them)
        entry, placeholder = min(entries, key=lambda e: (not _preferred(e[0]), int(e[0].get("index", 0)), e[1]))
        out.append(LibraryKernel(arch, name, entry, len(entries), placeholder, lib / f"{placeholder}.co"))
    return out
