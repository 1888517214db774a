"""Where a library's files go below `library/`, and the solution-index -> lazy-library mapping file.

Both are facts of the interface served (interfaces.py): `per_arch_dirs` puts every file of an architecture
in `library/<gfx>/` (rocm-libraries develop, Run.py `libraryDir` @00ee1f9d), otherwise `library/` is flat.
`mapping_file` names the range table 7.x's runtime uses to find the lazy library of a solution index
(MasterSolutionLibrary.hpp: `upper_bound(index)` then one step back, so each library's indices must be one
range starting at its key): a msgpack map {first index: library name} sorted by index, one for the whole
build (7.0-7.2: `TensileLiteLibrary_lazy_Mapping`) or, when the name holds `{gfx}`, one per architecture in
its folder listing only names ending `_<gfx>` (develop). Paths here are relative to `library/`.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence

from tensile_lite.errors import DatError
from tensile_lite.interfaces import Interface
from tensile_lite.library.formats import file_name, plain_like
from tensile_lite.library.plan import ArchPlan
from tensile_lite.targets import bare_gfx


def arch_folder(interface: Interface, arch: str) -> str:
    """The folder of `arch`'s files relative to `library/` ("" when flat); features (`:xnack+`) dropped."""
    return bare_gfx(arch) if interface.per_arch_dirs else ""


def in_folder(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def helper_code_object(arch: str) -> str:
    """The helper kernels' code object the runtime looks up by name next to the master."""
    return f"Kernels.so-000-{arch}.hsaco"


def mapping_format(fmt: str) -> str:
    """The mapping's format: the library's container, always holding the plain map (upstream writes the
    mapping as msgpack even into a YAML or an indexed build: Run.py @00ee1f9d)."""
    return plain_like(fmt)


def mapping_of(archs: Iterable[ArchPlan]) -> dict[int, str]:
    """{first solution index: placeholder name} over `archs`, sorted by index (empty libraries have no range)."""
    firsts = {ph.solutions[0].index: ph.name for ap in archs for ph in ap.placeholders if ph.solutions}
    return dict(sorted(firsts.items()))


def mapping_files(interface: Interface, archs: Sequence[ArchPlan]) -> list[tuple[str, dict[int, str]]]:
    """(stem relative to `library/`, mapping) of every mapping file `interface` has for a build of `archs`."""
    template = interface.mapping_file
    archs = [ap for ap in archs if ap.lazy]  # the mapping lists lazy libraries only; none is not written
    if not template or not archs:
        return []
    if "{gfx}" not in template:
        return [(template, mapping_of(archs))]
    out = []
    for ap in archs:
        gfx = bare_gfx(ap.arch)
        entries = {i: name for i, name in mapping_of([ap]).items() if name.endswith(f"_{gfx}")}
        if entries:  # upstream writes none for an architecture without libraries
            out.append((in_folder(arch_folder(interface, ap.arch), template.format(gfx=gfx)), entries))
    return out


def mapping_names(interface: Interface, archs: Sequence[ArchPlan], fmt: str) -> list[str]:
    return [file_name(stem, mapping_format(fmt)) for stem, _ in mapping_files(interface, archs)]


def library_of(mapping: Mapping[int, str], index: int) -> str | None:
    """The library the runtime's lookup gives for `index`: the first key above it, then one back (None
    when `index` lies below every key)."""
    keys = sorted(mapping)
    above = bisect.bisect_right(keys, index)
    return mapping[keys[above - 1]] if above else None


def is_mapping_document(doc: object) -> bool:
    """A decoded file that is a mapping (a map of index keys to names), not a library tree."""
    return isinstance(doc, Mapping) and bool(doc) and "library" not in doc and all(
        isinstance(v, str) for v in doc.values())


def read_mapping(doc: object) -> dict[int, str]:
    """A decoded mapping file as {first index: library name}, sorted; keys may be integers or decimal
    strings (the runtime's reader takes both). A DatError says what is wrong otherwise."""
    if not isinstance(doc, Mapping) or not doc:
        raise DatError("not a mapping file (a map of first solution index to library name)")
    out: dict[int, str] = {}
    for key, name in doc.items():
        if isinstance(key, str) and key.isdecimal():
            key = int(key)
        if not isinstance(key, int) or isinstance(key, bool) or key < 0:
            raise DatError(f"mapping key {key!r} is not a solution index")
        if not isinstance(name, str) or not name:
            raise DatError(f"mapping entry {key} does not name a library")
        out[key] = name
    return dict(sorted(out.items()))
