"""TensileCreateLibrary's command line, accepted exactly as hipBLASLt's CMake passes it.

Every upstream flag parses. The ones that change our output are honoured; the ones that only make sense
for upstream's implementation (compiler choice, file merging, build ids...) are accepted and noted in the
verbose log, never an error, so hipBLASLt's build calls us unchanged.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import NoReturn

import attrs

from tensile_lite.codeobj.cache import CACHE_ENV, DEFAULT_MAX_SIZE, parse_size
from tensile_lite.codeobj.proc import DEFAULT_TOOL_TIMEOUT
from tensile_lite.custom.locate import ENV as CUSTOM_ENV
from tensile_lite.custom.locate import FLAG as CUSTOM_FLAG
from tensile_lite.errors import EXIT_INPUT, BuildError, UnknownArchitecture, exit_codes_help
from tensile_lite.interfaces import HIPBLASLT_2024, INTERFACES, get_interface
from tensile_lite.library.formats import FORMATS as LIBRARY_FORMATS
from tensile_lite.library.formats import indexed_like
from tensile_lite.targets import get_target, parse_target_id

DEFAULT_LOCK_TIMEOUT = 600.0  # seconds a second build into the same OutputPath waits for the first

# dest -> why we ignore it (shown with --verbose 2)
IGNORED_FLAGS: dict[str, str] = {
    "cxx_compiler": "we assemble with LLVM directly; no C++ compiler is involved",
    "cmake_cxx_compiler": "no C++ compiler is involved",
    "merge_files": "one code object per placeholder library is the only layout we write",
    "num_merged_files": "one code object per placeholder library is the only layout we write",
    "short_file_names": "kernel names are our own deterministic names",
    "library_print_debug": "no debug printing is compiled into kernels",
    "no_enumerate": "no local GPU is ever probed",
    "package_library": "not used by hipBLASLt",
    "embed_library": "not used by hipBLASLt",
    "embed_library_key": "not used by hipBLASLt",
    "generate_sources_and_exit": "we never write sources",
    "logic_format": "logic files are read as YAML",
    "print_timing": "timing is always in the summary",
    "enable_marker": "markers are not generated",
    "build_client": "no client is built",
    "client_config": "no client is built",
    "global_parameters": "there are no global parameters",
    "no_generate_solution_table": "we never write MatchTable.yaml into the working directory",
    "asm_debug": "debug info is not emitted",
    "build_id": "code objects are always linked with --build-id=sha1",
    "validate_library": "every .co is always checked after linking",
    "separate_architectures": "architectures are always separate",
    # ROCm 7.x's parser (spec/rocm7_delta.md §2.2)
    "c_compiler": "no C compiler is involved",
    "address_sanitizer": "host sanitizers do not apply: tensile-lite builds no host code",
    "disable_asm_comments": "the assembly text never reaches the library, so its comments change nothing",
    "emit_mainloop_trace_marker": "trace markers are not generated",
    "enable_gemm_a2a_fusion": "all-to-all fused GEMM kernels are not generated",
    "gfx1250v0": "gfx1250 kernels are not generated",
}

# Library formats upstream's parser offers that our writer (library/formats.FORMATS) may not write yet:
# accepted on the command line so the failure is ours and says so (`check_library_format`), not argparse's.
UPSTREAM_LIBRARY_FORMATS: tuple[str, ...] = ("msgpack-indexed",)
# Upstream's name for the indexed layout: its container is the interface's (.dat.zlib for rocm-develop).
UPSTREAM_INDEXED = "msgpack-indexed"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # the usage, then one error line, and exit 2 (EXIT_INPUT)
        self.print_usage(sys.stderr)
        self.exit(EXIT_INPUT, f"{self.prog}: error: {message}\n")


def _seconds(value: str) -> float | None:
    """A time limit in seconds; 0 means none."""
    try:
        n = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {value!r}") from None
    if not n >= 0 or n == float("inf"):
        raise argparse.ArgumentTypeError(f"expected a number of seconds >= 0, got {value!r}")
    return n or None


def _jobs(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of jobs, got {value!r}") from None


def _size(value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _shard(value: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", value)
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise argparse.ArgumentTypeError(f"expected i/N with 1 <= i <= N (e.g. 2/4), got {value!r}")
    return int(m.group(1)), int(m.group(2))


def build_parser(default_interface: str = HIPBLASLT_2024, prog: str = "TensileCreateLibrary") -> argparse.ArgumentParser:
    """The command line; `default_interface` is the one served when --interface is not given (each entry
    point passes its own)."""
    p = _Parser(
        prog=prog,
        description=(
            "Build hipBLASLt's kernel library from logic files into OutputPath/library: the master "
            "TensileLibrary_lazy_<gfx>.dat, a .dat + .co per placeholder library, Kernels.so-000-<gfx>.hsaco, "
            "and what the served interface adds (2024: TensileManifest.txt; 7.x: the mapping file). Accepts "
            "upstream's command line unchanged; solutions whose kernels tensile-lite cannot generate yet are "
            "reported and left out consistently (or fail the build with --strict). "
            f"This command serves {get_interface(default_interface).summary} unless --interface says otherwise "
            f"(default interface: {default_interface})."
        ),
        epilog=exit_codes_help(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("LogicPath", help="folder searched recursively for <logic-filter>.yaml logic files")
    p.add_argument("OutputPath", help="output folder; the library goes to OutputPath/library")
    p.add_argument("RuntimeLanguage", choices=["OCL", "HIP", "HSA"], help="always HIP for hipBLASLt")
    p.add_argument("--architecture", default="all",
                   help="targets separated by ';' or '_', e.g. gfx90a:xnack+_gfx942 (features are accepted and "
                        "ignored: code objects serve both xnack modes); default: every architecture found")
    p.add_argument("--code-object-version", default="default", choices=["default", "V4", "V5", "4", "5"],
                   help="code object version: default and V4 mean 4")
    p.add_argument("--library-format", default=None,
                   choices=(*LIBRARY_FORMATS, *(f for f in UPSTREAM_LIBRARY_FORMATS if f not in LIBRARY_FORMATS)),
                   help="msgpack (default), msgpack-zstd (one zstd frame, still .dat), msgpack-zlib (.dat.zlib), "
                        "msgpack-indexed (format_version 2: solutions parsed on first use; .dat.zlib where the "
                        "interface compresses with zlib, i.e. rocm-develop, whose runtime is the one that reads "
                        "it), msgpack-indexed-zlib, yaml (debugging); default: the interface's (msgpack; "
                        "msgpack-zlib for rocm-develop)")
    p.add_argument("--logic-filter", default="*", metavar="GLOB",
                   help="which logic files to read: LogicPath/**/<GLOB>.yaml, so a name glob (*HHS*) or a path "
                        "below the logic root (gfx942/FreeSize/*); default: all")
    p.add_argument("--jobs", "-j", type=_jobs, default=-1,
                   help="worker processes (default: available cores; capped to the usable cores and to memory, "
                        "with a note)")
    p.add_argument("--verbose", "-v", type=int, default=1, help="0 quiet, 1 progress and summary, 2 details")
    p.add_argument("--keep-build-tmp", action="store_true",
                   help="keep each kernel's .s and .o in OutputPath/build_tmp for debugging")
    p.add_argument("--lazy-library-loading", action="store_true",
                   help="accepted: the lazy layout is the default")
    p.add_argument("--version", dest="library_version", default=None, help="written as version into the master")
    p.add_argument("--generate-manifest-and-exit", action="store_true",
                   help="write only library/TensileManifest.txt and stop")
    p.add_argument("--interface", default=None, choices=sorted(INTERFACES),
                   help="the hipBLASLt generation to write the library for: "
                        + "; ".join(f"{i.name}: {i.summary}" for i in INTERFACES.values())
                        + f" (default: {default_interface}, from how this command was started)")
    p.add_argument("--no-compress", dest="compress", action="store_false", default=None,
                   help="write .co files as plain ELF instead of compressed offload bundles (7.x)")
    p.add_argument("--offload-bundler", default=None,
                   help="clang-offload-bundler used to compress code objects (default: next to the assembler)")
    p.add_argument("--experimental", action="store_true",
                   help="also read logic files below a folder named Experimental (any case)")
    p.add_argument("--no-lazy-library-loading", dest="lazy_loading", action="store_false", default=True,
                   help="7.x: one master TensileLibrary_<gfx> holding every solution and one "
                        "TensileLibrary_<gfx>.co per architecture, for a runtime built without lazy loading")
    # ours
    p.add_argument("--strict", action="store_true",
                   help="fail if any solution needs a feature tensile-lite cannot generate yet")
    p.add_argument(CUSTOM_FLAG, default=None, metavar="DIR",
                   help="hipBLASLt's tensilelite/Tensile/CustomKernels folder (or a source root holding it), "
                        "where the hand-written kernels that solutions name in CustomKernelName are read "
                        f"(default: ${CUSTOM_ENV}, else that folder found walking up from LogicPath)")
    p.add_argument("--assembler", default=None, help="clang with the AMDGPU backend (default: searched)")
    p.add_argument("--linker", default=None, help="ld.lld (default: next to the assembler)")
    p.add_argument("--debug", action="store_true", help="show a traceback on errors")
    p.add_argument("--cache-dir", default=None, metavar="DIR",
                   help=f"kernel cache: assembled kernels are looked up here and stored after assembling, so a "
                        f"rebuild only assembles what changed (default: ${CACHE_ENV}, else no cache); shared "
                        "safely by concurrent builds")
    p.add_argument("--no-cache", action="store_true", help=f"use no kernel cache, even if ${CACHE_ENV} is set")
    p.add_argument("--cache-max-size", type=_size, default=DEFAULT_MAX_SIZE, metavar="SIZE",
                   help="the kernel cache's size limit (2G, 500M, bytes): the least recently used kernels are "
                        f"removed at the end of a build (default {DEFAULT_MAX_SIZE // 2**30}G; 0: keep none)")
    p.add_argument("--shard", type=_shard, default=None, metavar="I/N",
                   help="build only the I-th of N deterministic, cost-balanced parts of the kernels into "
                        "OutputPath as a shard folder (objects and a manifest, no library); "
                        "`tensile-lite merge` makes the library from all N")
    p.add_argument("--tool-timeout", type=_seconds, default=DEFAULT_TOOL_TIMEOUT, metavar="SECONDS",
                   help=f"time limit of each assembler and linker call (default {DEFAULT_TOOL_TIMEOUT:g}; "
                        "0: none); a call over it fails the build naming the kernel")
    p.add_argument("--lock-timeout", type=_seconds, default=DEFAULT_LOCK_TIMEOUT, metavar="SECONDS",
                   help="how long to wait for another build into the same OutputPath to finish (default "
                        f"{DEFAULT_LOCK_TIMEOUT:g}; 0: refuse at once)")
    # accepted for compatibility, ignored (see IGNORED_FLAGS)
    p.add_argument("--cxx-compiler", default=None)
    p.add_argument("--cmake-cxx-compiler", default=None)
    p.add_argument("--c-compiler", default=None)
    p.add_argument("--address-sanitizer", action="store_true")
    p.add_argument("--disable-asm-comments", action="store_true")
    p.add_argument("--emit-mainloop-trace-marker", action="store_true")
    p.add_argument("--enable-gemm-a2a-fusion", action="store_true")
    p.add_argument("--gfx1250v0", action="store_true")
    p.add_argument("--merge-files", dest="merge_files", action="store_true", default=True)
    p.add_argument("--no-merge-files", dest="merge_files", action="store_false")
    p.add_argument("--num-merged-files", type=int, default=1)
    p.add_argument("--short-file-names", dest="short_file_names", action="store_true", default=False)
    p.add_argument("--no-short-file-names", dest="short_file_names", action="store_false")
    p.add_argument("--library-print-debug", dest="library_print_debug", action="store_true", default=False)
    p.add_argument("--no-library-print-debug", dest="library_print_debug", action="store_false")
    p.add_argument("--no-enumerate", action="store_true")
    p.add_argument("--package-library", action="store_true")
    p.add_argument("--embed-library", default=None)
    p.add_argument("--embed-library-key", default=None)
    p.add_argument("--logic-format", default="yaml", choices=["yaml", "json"])
    p.add_argument("--generate-sources-and-exit", action="store_true")
    p.add_argument("--print-timing", action="store_true")
    p.add_argument("--separate-architectures", action="store_true")
    p.add_argument("--enable-marker", action="store_true")
    p.add_argument("--build-client", action="store_true")
    p.add_argument("--client-config", action="store_true")
    p.add_argument("--global-parameters", nargs="+", default=None)
    p.add_argument("--no-generate-solution-table", action="store_true")
    p.add_argument("--asm-debug", action="store_true")
    p.add_argument("--build-id", default="sha1")
    p.add_argument("--validate-library", action="store_true")
    return p


def parse_architectures(value: str) -> tuple[str, ...]:
    """`gfx908:xnack+_gfx90a;gfx942` -> ('gfx908', 'gfx90a', 'gfx942'); 'all' -> ().

    A target the registry does not know is an error naming --architecture: building nothing for it and
    exiting 0 would look like success to CMake."""
    parts = [p for p in re.split(r"[;_]", value.strip()) if p]
    if not parts or parts == ["all"]:
        return ()
    out: list[str] = []
    for part in parts:
        try:
            gfx, _features = parse_target_id(part)
        except UnknownArchitecture:
            raise UnknownArchitecture(f"--architecture: {part!r} is not an architecture such as gfx942 or "
                                      "gfx90a:xnack+") from None
        get_target(gfx, where="--architecture")
        if gfx not in out:
            out.append(gfx)
    return tuple(out)


@attrs.frozen(slots=True)
class TclRequest:
    logic_path: str
    output_path: str
    architectures: tuple[str, ...]  # empty: every architecture found
    code_object_version: int
    library_format: str
    logic_filter: str
    jobs: int | None
    verbose: int
    keep_build_tmp: bool
    strict: bool
    assembler: str | None
    linker: str | None
    library_version: str | None
    manifest_only: bool
    ignored: tuple[str, ...]
    tool_timeout: float | None = DEFAULT_TOOL_TIMEOUT
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    # the hipBLASLt generation served (interfaces.py): layout, naming, numbering, compression, manifest
    interface: str = HIPBLASLT_2024
    compress: bool | None = None           # .co as compressed offload bundles; None: the interface's default
    offload_bundler: str | None = None     # clang-offload-bundler to compress with (default: searched)
    experimental: bool = False             # read logic files below an `Experimental` folder too
    lazy_loading: bool = True              # 7.x's --no-lazy-library-loading turns it off
    cache_dir: str | None = None           # the kernel cache (codeobj/cache.py); None: none
    cache_max_size: int = DEFAULT_MAX_SIZE
    shard: tuple[int, int] | None = None   # (i, N): build the i-th of N parts of the kernels into a shard folder
    merge_from: tuple[str, ...] = ()       # shard folders whose objects make this build's kernels (merge)
    custom_kernels_dir: str | None = None  # --custom-kernels-dir (custom/locate.py; None: env, then walk up)


def check_library_format(fmt: str) -> str:
    """`fmt` if the library writer writes it; otherwise the one error saying it does not (the only place
    a format upstream knows but we do not yet write is refused)."""
    if fmt not in LIBRARY_FORMATS:
        raise BuildError(f"--library-format={fmt}: tensile-lite's library writer cannot write this format yet "
                         f"(it writes {', '.join(LIBRARY_FORMATS)}); hipBLASLt's CMake never passes it")
    return fmt


def library_format_for(requested: str | None, interface: str) -> str:
    """The format a build writes: the interface's default, or the one asked for; upstream's
    `msgpack-indexed` takes the container of the interface's default (zlib for rocm-develop)."""
    default = get_interface(interface).default_library_format
    if requested == UPSTREAM_INDEXED:
        return indexed_like(default)
    return check_library_format(requested or default)


def to_request(ns: argparse.Namespace, default_interface: str = HIPBLASLT_2024) -> TclRequest:
    defaults = vars(build_parser().parse_args(["x", "y", "HIP"]))
    ignored = tuple(sorted(f"--{k.replace('_', '-')}" for k in IGNORED_FLAGS if vars(ns).get(k) != defaults.get(k)))
    return TclRequest(
        logic_path=ns.LogicPath, output_path=ns.OutputPath, architectures=parse_architectures(ns.architecture),
        code_object_version=5 if ns.code_object_version in ("V5", "5") else 4,
        library_format=library_format_for(ns.library_format, ns.interface or default_interface),
        logic_filter=ns.logic_filter, jobs=None if ns.jobs is None or ns.jobs < 1 else ns.jobs,
        verbose=ns.verbose, keep_build_tmp=ns.keep_build_tmp, strict=ns.strict, assembler=ns.assembler,
        linker=ns.linker, library_version=ns.library_version, manifest_only=ns.generate_manifest_and_exit,
        ignored=ignored, tool_timeout=ns.tool_timeout, lock_timeout=ns.lock_timeout or 0.0,
        interface=ns.interface or default_interface, compress=ns.compress, offload_bundler=ns.offload_bundler,
        experimental=ns.experimental, lazy_loading=ns.lazy_loading,
        cache_dir=None if ns.no_cache else (ns.cache_dir or os.environ.get(CACHE_ENV) or None),
        cache_max_size=ns.cache_max_size, shard=ns.shard, custom_kernels_dir=ns.custom_kernels_dir,
    )
