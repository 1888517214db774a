"""Writing a plan's `.dat` files, the mapping file and the manifest into a `library/` folder.

Each file is written atomically, placeholders before their master, and the manifest last: a run that
stops early leaves no master library that points at missing files and no manifest claiming completeness.
Where each file goes and which mapping files exist is the interface's (layout.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tensile_lite.library.documents import FactsOf, master_document, placeholder_document
from tensile_lite.library.formats import DEFAULT_FORMAT, encode, file_name, write_atomic
from tensile_lite.library.layout import arch_folder, helper_code_object, mapping_files, mapping_format
from tensile_lite.library.plan import ArchPlan, LibraryPlan
from tensile_lite.library.solution_entry import Honoured

MANIFEST = "TensileManifest.txt"


def code_object_names(ap: ArchPlan) -> list[str]:
    """The code objects the full build writes next to the `.dat` files: the helpers, then one per
    placeholder (lazy) or one for the architecture (ArchPlan.code_objects)."""
    return [helper_code_object(ap.arch)] + [f"{name}.co" for name, _ in ap.code_objects]


def library_stems(ap: ArchPlan) -> list[str]:
    """The `.dat` files of an architecture, without extension: its master, then its placeholder libraries
    (none without lazy loading: the master holds them)."""
    return [ap.master_name] + ([p.name for p in ap.placeholders] if ap.lazy else [])


def write_arch(ap: ArchPlan, library_dir: Path, fmt: str = DEFAULT_FORMAT,
               honoured: Honoured | None = None, facts: FactsOf | None = None) -> list[Path]:
    """`honoured`: what the built kernels read from the argument header (None: as the logic file says);
    `facts`: what each built kernel says of itself (documents.FactsOf), for the runtimes that read it.
    Files go to the architecture's folder below `library_dir` (the interface's layout)."""
    folder = library_dir / arch_folder(ap.interface, ap.arch)
    written = []
    for ph in ap.placeholders if ap.lazy else ():
        path = folder / file_name(ph.name, fmt)
        write_atomic(path, encode(placeholder_document(ph, honoured, facts), fmt))
        written.append(path)
    master = folder / file_name(ap.master_name, fmt)
    write_atomic(master, encode(master_document(ap, honoured, facts), fmt))
    return [master, *written]


def write_mappings(plan: LibraryPlan, library_dir: Path, fmt: str = DEFAULT_FORMAT) -> list[Path]:
    """The interface's solution-index -> library mapping files (none for the 2024 interface)."""
    written = []
    for stem, mapping in mapping_files(plan.interface, plan.archs):
        path = library_dir / file_name(stem, mapping_format(fmt))
        write_atomic(path, encode(mapping, mapping_format(fmt)))
        written.append(path)
    return written


def write_library(plan: LibraryPlan, library_dir: Path, fmt: str = DEFAULT_FORMAT) -> list[Path]:
    """Write every architecture's master and placeholder files and the mapping files; returns their
    paths (each architecture's master first, mappings last)."""
    paths: list[Path] = []
    for ap in plan.archs:
        paths += write_arch(ap, library_dir, fmt)
    return paths + write_mappings(plan, library_dir, fmt)


def write_manifest(library_dir: Path, paths: Iterable[Path]) -> Path:
    """`TensileManifest.txt`: one absolute path per line (CMake's build stamp), in the order given."""
    text = "".join(f"{Path(p).resolve()}\n" for p in paths)
    target = library_dir / MANIFEST
    write_atomic(target, text.encode("utf-8"))
    return target
