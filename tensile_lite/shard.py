"""Sharded builds: which kernels shard i of N builds, what a shard folder holds, and what a merge checks.

A shard build (`--shard i/N`) reads and plans exactly as a full build, takes its part of the kernels
(`assign`: every kernel of every architecture, sorted by name, dealt greedily by estimated cost to the least
loaded shard, so the parts depend only on the kernels, never on --jobs or file order) and fills
`<shard>/objects/` with their assembled objects, stored as kernel cache entries (codeobj/cache.py, keyed and
checksummed the same way). `<shard>/tensile-lite-shard.json`, written last, names the shard, the digest of
the inputs (the request's output-shaping fields and every selected logic file's bytes), the assembler
identity per architecture and the shard's kernels. A merge checks that the shards are 1..N of one set
(same inputs, each present once, disjoint), then runs the ordinary build with those objects as its only
source of kernel objects: linking, helper code objects and metadata are exactly a single build's.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from tensile_lite.errors import BuildError, TensileLiteError
from tensile_lite.model import LogicFile, Solution
from tensile_lite.tcl_args import TclRequest

MANIFEST = "tensile-lite-shard.json"
OBJECTS = "objects"
FORMAT = 1
# The request fields that shape the output; the others (paths, jobs, verbosity, time limits, cache) do not.
REQUEST_FIELDS: tuple[str, ...] = (
    "architectures", "code_object_version", "library_format", "logic_filter", "strict", "library_version",
    "interface", "compress", "experimental", "lazy_loading")
KernelId = tuple[str, str]  # (architecture, kernel name)


def kernel_cost(sol: Solution) -> int:
    """A cheap estimate of the work of one kernel (generating and assembling scale with the unrolled loop body
    each thread runs): the multiply-accumulates and loads per thread of one unroll, plus a fixed part for
    the prologue and epilogue."""
    mt0, mt1 = sol.macro_tile
    threads = max(sol.num_threads, 1)
    return 256 + (mt0 * mt1 * sol.depth_u) // threads + ((mt0 + mt1) * sol.depth_u) // threads


def assign(costs: Iterable[tuple[KernelId, int]], shards: int) -> dict[KernelId, int]:
    """Shard (1..`shards`) of each kernel: the costliest first, each to the least loaded shard (lowest number
    on a tie); ties in cost are taken in (architecture, name) order, so the result is a function of the set."""
    loads = [0] * shards
    out: dict[KernelId, int] = {}
    for kid, cost in sorted(costs, key=lambda kc: (-kc[1], kc[0])):
        i = min(range(shards), key=lambda s: (loads[s], s))
        loads[i] += cost
        out[kid] = i + 1
    return out


def request_fields(req: TclRequest) -> dict[str, Any]:
    return {name: _jsonable(getattr(req, name)) for name in REQUEST_FIELDS}


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def inputs_digest(req: TclRequest, logic: Sequence[LogicFile]) -> str:
    """Hex SHA-256 of what a build is made from: the output-shaping request fields and every selected logic
    file (path below LogicPath and bytes), whatever folder LogicPath is."""
    root = Path(req.logic_path).resolve()
    h = hashlib.sha256(json.dumps(request_fields(req), sort_keys=True).encode() + b"\n")
    for path in sorted({Path(lf.path).resolve() for lf in logic}):
        rel = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
        h.update(f"{rel}\0".encode() + hashlib.sha256(path.read_bytes()).digest())
    # the custom kernels the logic names are inputs too (their text, wherever they were found)
    for name, digest in sorted({(s.custom_kernel_name, s.custom_source.sha256) for lf in logic
                                for s in lf.solutions if s.custom_source}):
        h.update(f"custom {name}\0{digest}\n".encode())
    return h.hexdigest()


@attrs.frozen(slots=True)
class Shard:
    folder: Path
    index: int
    count: int
    inputs: str
    request: dict[str, Any] = attrs.field(eq=False)
    logic_path: str
    assemblers: dict[str, str] = attrs.field(eq=False)  # architecture -> assembler identity
    kernels: tuple[KernelId, ...]

    @property
    def objects(self) -> Path:
        return self.folder / OBJECTS

    @property
    def label(self) -> str:
        return f"shard {self.index}/{self.count} ({self.folder})"


def write_manifest(folder: Path, req: TclRequest, inputs: str, assemblers: dict[str, str],
                   kernels: Sequence[KernelId]) -> Path:
    """The shard's manifest, written atomically and last: a folder without one is an unfinished shard."""
    assert req.shard is not None
    i, n = req.shard
    doc = {"format": FORMAT, "shard": i, "shards": n, "inputs": inputs, "request": request_fields(req),
           "logic_path": str(Path(req.logic_path).resolve()), "assemblers": dict(sorted(assemblers.items())),
           "kernels": [list(k) for k in sorted(kernels)]}
    dest = folder / MANIFEST
    tmp = folder / f".{MANIFEST}.tmp-{os.getpid()}"
    tmp.write_text(json.dumps(doc, indent=1) + "\n")
    os.replace(tmp, dest)
    return dest


def read_shard(folder: Path) -> Shard:
    path = folder / MANIFEST
    if not folder.is_dir():
        raise TensileLiteError(f"shard folder {folder} does not exist")
    if not path.is_file():
        raise TensileLiteError(f"{folder} is not a finished shard: it has no {MANIFEST} (its `--shard` build "
                               "did not finish, or this is not a shard folder)")
    try:
        doc = json.loads(path.read_text())
        if doc.get("format") != FORMAT:
            raise TensileLiteError(f"{path}: shard format {doc.get('format')!r}, this tensile-lite reads {FORMAT}")
        return Shard(folder, int(doc["shard"]), int(doc["shards"]), str(doc["inputs"]), dict(doc["request"]),
                     str(doc["logic_path"]), {str(k): str(v) for k, v in doc["assemblers"].items()},
                     tuple((str(a), str(k)) for a, k in doc["kernels"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise TensileLiteError(f"{path} is not a valid shard manifest: {exc}") from None


def read_shards(folders: Sequence[Path]) -> tuple[Shard, ...]:
    """Shards 1..N of one build, in order; an error names what is missing, repeated or from other inputs."""
    if not folders:
        raise TensileLiteError("merge needs the shard folders")
    shards = [read_shard(Path(f)) for f in folders]
    first = shards[0]
    for s in shards[1:]:
        if s.count != first.count:
            raise TensileLiteError(f"{s.label} is one of {s.count} shards, {first.label} one of {first.count}: "
                                   "they are not from one sharded build")
        if s.inputs != first.inputs:
            raise TensileLiteError(f"{s.label} and {first.label} were built from different inputs (logic files "
                                   "or output-shaping flags differ)")
    by_index: dict[int, Shard] = {}
    for s in shards:
        if s.index in by_index:
            raise TensileLiteError(f"shard {s.index}/{s.count} is given twice: {by_index[s.index].folder} and {s.folder}")
        by_index[s.index] = s
    missing = [i for i in range(1, first.count + 1) if i not in by_index]
    if missing:
        raise TensileLiteError(f"shard(s) {', '.join(f'{i}/{first.count}' for i in missing)} missing; given: "
                               + ", ".join(s.label for s in sorted(shards, key=lambda s: s.index)))
    owner: dict[KernelId, Shard] = {}
    for s in sorted(shards, key=lambda s: s.index):
        for k in s.kernels:
            if k in owner:
                raise TensileLiteError(f"kernel {k[1]} ({k[0]}) is in both {owner[k].label} and {s.label}")
            owner[k] = s
    return tuple(by_index[i] for i in range(1, first.count + 1))


def check_merge(shards: Sequence[Shard], inputs: str, assemblers: dict[str, str],
                kernels: Iterable[KernelId]) -> None:
    """What a merge checks once it has read the logic again: same inputs, same assembler, same kernels."""
    first = shards[0]
    if inputs != first.inputs:
        raise TensileLiteError(f"the logic files under the merge's LogicPath differ from those the shards were "
                               f"built from ({first.logic_path})")
    for arch, ident in sorted(assemblers.items()):
        theirs = first.assemblers.get(arch)
        if theirs is not None and theirs != ident:
            raise BuildError(f"the shards' {arch} kernels were assembled by another assembler than the one this "
                             "merge finds (its binary or --version differ); merge with the same toolchain "
                             "(--assembler) so the library is the one a single build makes")
    wanted = set(kernels)
    have = {k for s in shards for k in s.kernels}
    lacking = sorted(wanted - have)
    if lacking:
        raise BuildError(f"{len(lacking)} kernel(s) are in no shard, first {lacking[0][1]} ({lacking[0][0]})")
    extra = sorted(have - wanted)
    if extra:
        raise BuildError(f"{len(extra)} kernel(s) of the shards are not in this build, first {extra[0][1]} "
                         f"({extra[0][0]})")
