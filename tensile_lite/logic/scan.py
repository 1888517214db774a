"""Going through a logic tree: which files are selected, which architecture each belongs to, and what
reading each gave. The one reader loop the build, `check-logic` (7.x's TensileLogic step),
`inspect-logic` and `coverage` share.

The rule (README, "Building hipBLASLt 7.x"): each file's architecture is read from its head first
(sniff.py), so a file of an architecture not requested is never parsed in full and cannot stop anything.
A file of a requested architecture (or any, when none is requested) is read in full; if that fails, the
failure is yielded with the architecture the head gave, and the caller decides (the build reports every
such file, then fails; the inspection commands list them and go on). A file whose head names no
architecture is read in full too: only then is it known whether it is a logic file at all, and the
reader's defences against hostile YAML apply to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import attrs

from tensile_lite.errors import TensileLiteError
from tensile_lite.logic.discover import find_logic_files
from tensile_lite.logic.reader import read_logic_file
from tensile_lite.logic.sniff import sniff_arch
from tensile_lite.model.logicfile import LogicFile
from tensile_lite.targets import get_target

FALLBACK_ARCH = "fallback"  # logic files for every architecture; no target record to check


@attrs.frozen(slots=True)
class Read:
    """A file read in full."""

    path: Path
    logic: LogicFile


@attrs.frozen(slots=True)
class Unreadable:
    """A selected file that could not be read (or names an architecture nobody knows)."""

    path: Path
    arch: str | None  # from the file's head, when it names one
    error: TensileLiteError

    @property
    def arch_label(self) -> str:
        return self.arch or "unknown architecture"


@attrs.frozen(slots=True)
class OtherArch:
    """A file of an architecture that was not requested: never parsed beyond its head."""

    path: Path
    arch: str


Scanned = Read | Unreadable | OtherArch


def _unknown_target(path: Path, arch: str) -> TensileLiteError | None:
    if arch == FALLBACK_ARCH:
        return None
    try:
        get_target(arch, where=f"{path}: ArchitectureName")
    except TensileLiteError as exc:
        return exc
    return None


def scan_logic(paths: Iterable[str | Path], pattern: str = "*", *, experimental: bool = False,
               architectures: Iterable[str] = (), known_targets: bool = False,
               custom_kernels_dir: str | Path | None = None) -> Iterator[Scanned]:
    """Each selected file (find_logic_files order) as Read, Unreadable or OtherArch.

    `architectures` empty means every architecture. With `known_targets`, a file naming an architecture
    the target registry does not know is Unreadable (building nothing for it would look like success).
    Custom kernels are read from `custom_kernels_dir`, else as custom/locate.py finds them from the root
    the file was found under.
    """
    wanted = frozenset(architectures)
    roots = [Path(p) for p in paths]
    for path in find_logic_files(roots, pattern, experimental=experimental):
        head = sniff_arch(path)
        if head is not None and wanted and head not in wanted:
            yield OtherArch(path, head)
            continue
        if head is not None and known_targets and (bad := _unknown_target(path, head)) is not None:
            yield Unreadable(path, head, bad)
            continue
        try:
            root = next((r for r in roots if path.is_relative_to(r)), path)
            lf = read_logic_file(path, custom_kernels_dir=custom_kernels_dir, logic_root=root)
        except TensileLiteError as exc:
            yield Unreadable(path, head, exc)
            continue
        if head is None:  # the head did not tell; the full read did
            if wanted and lf.arch not in wanted:
                yield OtherArch(path, lf.arch)
                continue
            if known_targets and (bad := _unknown_target(path, lf.arch)) is not None:
                yield Unreadable(path, lf.arch, bad)
                continue
        yield Read(path, lf)
