"""Library metadata: the `.dat` trees the hipBLASLt runtime loads, and the plan behind them.

Use:

    plan = build_plan(logic_files, archs=["gfx942"], supported=kernel_writer_supports,
                      interface=get_interface("rocm-7.2"))     # default: the 2024 interface
    for ap in plan.archs:                      # one ArchPlan per architecture, sorted
        for ph in ap.placeholders:             # one library (.dat + .co) each, sorted by name
            ph.name, ph.kernel_names           # the .co must hold exactly these symbols
        ap.kernels[name].key / .solution       # build each kernel once, from any of its solutions
    plan = plan.restricted(lambda s: ...)      # drop more solutions (e.g. kernels that failed)
    paths = write_library(plan, out / "library", "msgpack")   # + the interface's mapping files
    write_manifest(out / "library", paths + code_object_paths) # 2024 only (Interface.manifest)

What differs between the hipBLASLt generations served is read from their `Interface` record
(interfaces.py), never tested by name: where each architecture's solution numbers start
(plan.first_index), how data types are spelled (spelling.py), fallback library names (naming.py), where
files go and which mapping files exist (layout.py).

Everything up to `write_library` is pure and deterministic: the same logic files in any order give the
same plan and byte-identical files. `read_dat` reads every format back.

Compared with upstream's output for the same logic (tests/library/test_reference.py checks all of it):
identical are the hardware / operation / problem-type structure of every master library, placeholder
names, the solutions of each placeholder, and for each solution its problemType, sizeMapping,
problemPredicate (types, values, order and msgpack value types), hardwarePredicate, debugKernel,
libraryLogicIndex, ideals and linearModel, and every selection row (predicate, Matching properties and
distance, table keys, speeds and the solution each key selects, FreeSize lists). Differences we keep:

- Solution indices: ours are assigned in (placeholder name, file path, position) order from 0 per
  architecture; upstream's follow the order in which its parallel parser finished. For 7.x the same
  order continues over the architectures (sorted), as 7.x renumbers them; a fallback file's solutions
  are numbered inside each architecture's range (7.x numbers them once, ahead of every architecture,
  and shares them, which its per-architecture mapping cannot express).
- Kernel names: ours are `<problem>_MT.._MI.._K<48 bits of the content key>` (custom kernels keep their
  own name, as upstream's do; their solutions carry the kernel's custom.config, merged by the reader); upstream's are minimal names over the whole build, which change when the set of logic files
  changes. The runtime only looks assembly kernel names up, never computes them.
- Solution names: our kernel name followed by the solution's runtime arguments (`_GSU.._WGM..`), the
  same pattern as upstream's (its kernel name plus the runtime arguments that vary in the build).
- Ties in row order: master problem-type rows are sorted by placeholder-name length as upstream does;
  equal lengths (whose predicates exclude each other) are ordered by name instead of by merge order, and
  Matching rows with equal keys keep file-path order instead of merge order.
- Map key order: fixed by us (solution fields that rarely change first, which makes zstd output ~6%
  smaller); the reader looks every field up by key. Operations in a ProblemMap are sorted by name.
- Files of the `fallback` architecture name their libraries `..._fallback_<gfx>` (upstream before
  2026-04: `_fallback`) so the runtime's `TensileLibrary_*_<gfx>` preload still finds them.
"""

from tensile_lite.library.documents import master_document, placeholder_document
from tensile_lite.library.formats import DEFAULT_FORMAT, FORMATS, decode, encode, file_name, read_dat
from tensile_lite.library.layout import arch_folder, library_of, mapping_files, read_mapping
from tensile_lite.library.naming import kernel_name_for, placeholder_name
from tensile_lite.library.plan import (
    ArchPlan,
    Excluded,
    KernelEntry,
    LibraryPlan,
    PlaceholderPlan,
    PlannedSolution,
    build_plan,
    first_index,
)
from tensile_lite.library.spelling import SPELLING_2024, TypeSpelling, spelling_of
from tensile_lite.library.writer import (
    MANIFEST,
    code_object_names,
    write_arch,
    write_library,
    write_manifest,
    write_mappings,
)

__all__ = [
    "DEFAULT_FORMAT", "FORMATS", "MANIFEST", "SPELLING_2024", "ArchPlan", "Excluded", "KernelEntry", "LibraryPlan",
    "PlaceholderPlan", "PlannedSolution", "TypeSpelling", "arch_folder", "build_plan", "code_object_names",
    "decode", "encode", "file_name", "first_index", "kernel_name_for", "library_of", "mapping_files",
    "master_document", "placeholder_document", "placeholder_name", "read_dat", "read_mapping", "spelling_of",
    "write_arch", "write_library", "write_manifest", "write_mappings",
]
