"""`tensile-lite merge`: the library from the N shard folders of a sharded build (shard.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tensile_lite import tcl
from tensile_lite.codeobj.proc import DEFAULT_TOOL_TIMEOUT
from tensile_lite.errors import TensileLiteError
from tensile_lite.shard import read_shards
from tensile_lite.tcl_args import DEFAULT_LOCK_TIMEOUT, TclRequest

NAME = "merge"
HELP = "make the library from the shard folders of `TensileCreateLibrary --shard i/N` builds"
DESCRIPTION = (
    "Check that SHARD_DIR... are shards 1..N of one sharded build (same logic files and flags, each present "
    "once, disjoint kernels, the same assembler as this machine's), then write OUT/library exactly as a single "
    "build with those flags would: the kernels' objects come from the shards (nothing is assembled again), the "
    "code objects are linked and the metadata written here. The logic files are read again, from the path the "
    "shards were built from unless --logic-path gives another copy (checked byte for byte)."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="SHARD_DIR... OUT",
                   help="the shard folders (OutputPath of each --shard build), then the output folder")
    p.add_argument("--logic-path", default=None, help="the logic root (default: the one the shards recorded)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="worker processes (default: available cores)")
    p.add_argument("--verbose", "-v", type=int, default=1, help="0 quiet, 1 progress and summary, 2 details")
    p.add_argument("--assembler", default=None, help="clang with the AMDGPU backend (default: searched)")
    p.add_argument("--linker", default=None, help="ld.lld (default: next to the assembler)")
    p.add_argument("--offload-bundler", default=None, help="clang-offload-bundler (7.x interfaces)")


def merge_request(args: argparse.Namespace) -> TclRequest:
    *folders, out = args.paths
    if not folders:
        raise TensileLiteError("merge needs the shard folders and then the output folder")
    shards = read_shards([Path(f) for f in folders])
    req = shards[0].request
    return TclRequest(
        logic_path=args.logic_path or shards[0].logic_path, output_path=out,
        architectures=tuple(req["architectures"]), code_object_version=int(req["code_object_version"]),
        library_format=str(req["library_format"]), logic_filter=str(req["logic_filter"]),
        jobs=args.jobs if args.jobs and args.jobs > 0 else None, verbose=args.verbose, keep_build_tmp=False,
        strict=bool(req["strict"]), assembler=args.assembler, linker=args.linker,
        library_version=req["library_version"], manifest_only=False, ignored=(),
        tool_timeout=DEFAULT_TOOL_TIMEOUT, lock_timeout=DEFAULT_LOCK_TIMEOUT, interface=str(req["interface"]),
        compress=req["compress"], offload_bundler=args.offload_bundler, experimental=bool(req["experimental"]),
        lazy_loading=bool(req["lazy_loading"]), merge_from=tuple(str(s.folder) for s in shards))


def run(args: argparse.Namespace) -> int:
    return tcl.run(merge_request(args))
