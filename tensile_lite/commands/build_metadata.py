"""`tensile-lite build-metadata`: write the library `.dat` trees of a logic tree, without any kernels."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from tensile_lite.errors import LogicError, Where
from tensile_lite.library import DEFAULT_FORMAT, FORMATS, MANIFEST, build_plan, write_library, write_manifest
from tensile_lite.logic import find_logic_files, read_logic_file
from tensile_lite.tcl_args import parse_architectures as tcl_parse_architectures

NAME = "build-metadata"
HELP = "write the library .dat files (metadata only: no kernels are built)"
DESCRIPTION = (
    "Read hipBLASLt logic files under LOGIC_PATH and write, for every architecture, the master library "
    "TensileLibrary_lazy_<gfx>.dat and one placeholder library per problem type into OUT_DIR/library, plus "
    "TensileManifest.txt listing them. This is a debugging and measuring aid: NO KERNELS are built, so the "
    ".co and Kernels.so-000-<gfx>.hsaco files the runtime also needs are not written, and every solution "
    "of the logic files is listed (the full build leaves out solutions whose kernels it cannot make)."
)

def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("logic_path", metavar="LOGIC_PATH", help="logic file or folder (searched recursively)")
    p.add_argument("out_dir", metavar="OUT_DIR", help="output folder; files go to OUT_DIR/library")
    p.add_argument("--architecture", default="all",
                   help="architectures to build, separated by ';' or '_' (e.g. gfx90a:xnack+_gfx942); "
                        "default: all")
    p.add_argument("--library-format", choices=FORMATS, default=DEFAULT_FORMAT,
                   help=f"format of the library files (default {DEFAULT_FORMAT})")
    p.add_argument("--logic-filter", default="*", metavar="GLOB",
                   help="only logic files whose name (without .yaml) matches GLOB (default '*')")


def parse_architectures(text: str) -> list[str] | None:
    """None for `all`; otherwise the bare gfx names, sorted (the build's parser: unknown ones are errors)."""
    archs = tcl_parse_architectures(text)
    return sorted(archs) if archs else None


def run(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    archs = parse_architectures(args.architecture)
    paths = find_logic_files([args.logic_path], args.logic_filter)
    if not paths:
        raise LogicError(f"no logic files matching {args.logic_filter!r}.yaml", Where(file=args.logic_path))
    logic = []
    for lf in map(read_logic_file, paths):
        if lf.library_writer_gap:  # as the build does: out, with the reason
            print(f"warning: {lf.path} left out: {lf.library_writer_gap}", file=sys.stderr)
        else:
            logic.append(lf)
    plan = build_plan(logic, archs=archs)
    if not plan.archs:
        wanted = ", ".join(archs or ["all"])
        raise LogicError(f"none of the {len(paths)} logic files is for {wanted}", Where(file=args.logic_path))
    library_dir = Path(args.out_dir) / "library"
    written = write_library(plan, library_dir, args.library_format)
    write_manifest(library_dir, written)
    total = sum(p.stat().st_size for p in written)
    for ap in plan.archs:
        print(f"{ap.arch}: {len(ap.placeholders)} placeholder libraries, {ap.solution_count} solutions, "
              f"{len(ap.kernels)} kernels (not built)")
    print(f"wrote {len(written)} {args.library_format} library files ({total:,} bytes) and {MANIFEST} "
          f"to {library_dir} in {time.perf_counter() - started:.1f} s")
    print("metadata only: no kernels were built (.co and Kernels.so-000-<gfx>.hsaco are not written)",
          file=sys.stderr)
    return 0
