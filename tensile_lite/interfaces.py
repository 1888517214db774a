"""The interface registry: one frozen record per hipBLASLt generation a build serves, the only place
that says how the libraries of each differ (where files go, how they are named and numbered, what is
compressed, whether a manifest is written).

A build serves exactly one interface, chosen by how it is invoked (the `TensileCreateLibrary` script is
the 2024 one; `python -m Tensile.TensileCreateLibrary` and `python -m tensilelite create-library` are
7.x's) or by `--interface`, never guessed from the logic files. Sources: `spec/tcl_anatomy.md` (2024),
`spec/rocm7_delta.md` §2-3 and its addendum (7.x).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

import attrs

from tensile_lite.errors import TensileLiteError


@attrs.frozen(slots=True)
class Interface:
    """What the runtime of one hipBLASLt generation loads, as facts the writer and the driver read."""

    name: str
    summary: str                     # one line for --help
    per_arch_dirs: bool              # library/<gfx>/... (newest develop) instead of a flat library/
    # the solution-index -> lazy-library range table; "{gfx}" is replaced per architecture; "" = none
    mapping_file: str
    # solution indices renumbered contiguously per lazy library (the mapping file's range table needs it)
    contiguous_indices: bool
    fnuz_names: bool                 # data types 11-14 spelled as 7.x's fnuz types (Float8_fnuz, F8N)
    # fallback lazy libraries named *_fallback_<gfx> (else a bare *_fallback, usable by one architecture
    # only). True for every generation we serve: the 2024 and 7.0-7.2 writers upstream shared one bare
    # `_fallback` library between architectures, whose solution indices (and, in 7.2, mapping entries)
    # then collide; those runtimes only follow the names a master gives, so they load the suffixed ones.
    fallback_per_arch: bool
    manifest: bool                   # TensileManifest.txt, written last (2024's CMake stamp)
    compress_code_objects: bool      # .co as compressed offload bundles unless --no-compress
    default_library_format: str      # --library-format when the command line does not give one
    # the runtime reads indexed .dat files (format_version 2, `msgpack-indexed`; rocm-libraries PR 11295)
    reads_indexed: bool = False
    # the master a runtime built without lazy loading opens ("{gfx}" replaced; every solution inline, one
    # code object per architecture: docs/rocm7_library_types.md); "" = no such layout is written for it
    eager_master: str = ""
    # which keys its solution reader requires beyond the 2024 ones (library/entry_schema.py names the
    # records: "2024", "7.2", "develop"); a key it requires and we omit fails the whole library's load
    solution_schema: str = "2024"


HIPBLASLT_2024 = "hipblaslt-2024"
ROCM_7_2 = "rocm-7.2"
ROCM_DEVELOP = "rocm-develop"

_INTERFACES: tuple[Interface, ...] = (
    Interface(HIPBLASLT_2024, "the 2024 hipBLASLt (TensileCreateLibrary script, flat library/ with a manifest)",
              per_arch_dirs=False, mapping_file="", contiguous_indices=False, fnuz_names=False,
              fallback_per_arch=True, manifest=True, compress_code_objects=False,
              default_library_format="msgpack"),
    Interface(ROCM_7_2, "ROCm 7.0-7.2 (flat library/, TensileLiteLibrary_lazy_Mapping.dat, compressed .co)",
              per_arch_dirs=False, mapping_file="TensileLiteLibrary_lazy_Mapping", contiguous_indices=True,
              fnuz_names=True, fallback_per_arch=True, manifest=False, compress_code_objects=True,
              default_library_format="msgpack", eager_master="TensileLibrary_{gfx}", solution_schema="7.2"),
    Interface(ROCM_DEVELOP, "rocm-libraries develop (library/<gfx>/, per-architecture mapping, .dat.zlib)",
              per_arch_dirs=True, mapping_file="TensileLiteLibrary_lazy_{gfx}_Mapping", contiguous_indices=True,
              fnuz_names=True, fallback_per_arch=True, manifest=False, compress_code_objects=True,
              default_library_format="msgpack-zlib", reads_indexed=True, eager_master="TensileLibrary_{gfx}",
              solution_schema="develop"),
)

INTERFACES: Mapping[str, Interface] = MappingProxyType({i.name: i for i in _INTERFACES})


def get_interface(name: str, where: str = "--interface") -> Interface:
    """The record of `name`, or a usage error listing the known ones."""
    found = INTERFACES.get(name)
    if found is None:
        raise TensileLiteError(f"{where}: unknown interface {name!r}; known: {', '.join(INTERFACES)}")
    return found
