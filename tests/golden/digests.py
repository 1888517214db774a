"""Digests of everything the build writes for the dev set, except the assembler's own bytes.

A restructuring must not change a single output byte. The code objects depend on the LLVM build as
well as on us, so they are represented by what we hand the assembler: the assembly text of every
kernel and helper kernel, which the code object is a pure function of for a given toolchain. The
`.dat` files are ours alone and are digested whole, in every library format.

    python3 -m tests.golden.digests            # compare with the recorded digests, list what differs
    python3 -m tests.golden.digests --update   # record the current outputs (an intended change)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from tensile_lite.asm.gemm import runtime_overrides_read, unsupported_reasons
from tensile_lite.build import helper_kernels, kernel_source_of
from tensile_lite.library.formats import FORMATS
from tensile_lite.library.plan import ArchPlan, build_plan
from tensile_lite.library.writer import write_arch
from tensile_lite.logic import read_logic_file
from tensile_lite.model import LogicFile, Solution

RECORD = Path(__file__).with_name("devset_digests.json")
CODE_OBJECT_VERSION = 4


def _sha(data: bytes | str) -> str:
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


def _supported(sol: Solution) -> bool | str:
    reasons = unsupported_reasons(sol)
    return ", ".join(reasons) if reasons else True


def plan_for(paths: Iterable[Path]) -> tuple[list[LogicFile], object]:
    logic = [read_logic_file(p) for p in sorted(paths)]
    return logic, build_plan(logic, supported=_supported)


def _kernel_digest(item: tuple[Solution, str]) -> str:
    sol, name = item
    # custom kernels: their own file, as the build assembles it
    return _sha(kernel_source_of(sol, name, code_object_version=CODE_OBJECT_VERSION).assembly_text())


def _workers() -> int:
    return min(2, len(os.sched_getaffinity(0)))


def kernel_digests(ap: ArchPlan) -> dict[str, str]:
    """Kernel name -> digest of its assembly text, for the GEMM kernels and the helper code object.
    Rendering is the cost (tens of ms a kernel), so large architectures render in two processes."""
    items = [(entry.solution, name) for name, entry in ap.kernels.items()]
    if len(items) > 64 and _workers() > 1:
        with ProcessPoolExecutor(_workers()) as pool:
            digests = list(pool.map(_kernel_digest, items, chunksize=16))
    else:
        digests = [_kernel_digest(item) for item in items]
    out = dict(zip((name for _, name in items), digests, strict=True))
    for k in helper_kernels(ap, CODE_OBJECT_VERSION):
        out[f"Kernels.so-000-{ap.arch}.hsaco:{k.name}"] = _sha(k.assembly_text())
    return dict(sorted(out.items()))


def library_digests(ap: ArchPlan) -> dict[str, str]:
    """File name -> digest of its bytes, for the `.dat` files in every format."""
    out: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for fmt in FORMATS:
            for path in write_arch(ap, Path(tmp), fmt, honoured=runtime_overrides_read):
                out[path.name] = _sha(path.read_bytes())
    return dict(sorted(out.items()))


def arch_digests(ap: ArchPlan) -> dict[str, dict[str, str]]:
    return {"kernels": kernel_digests(ap), "library": library_digests(ap)}


def all_digests(paths: Iterable[Path]) -> dict[str, dict[str, dict[str, str]]]:
    _, plan = plan_for(paths)
    return {ap.arch: arch_digests(ap) for ap in plan.archs}


def differences(recorded: dict, current: dict, limit: int = 20) -> list[str]:
    """Human-readable lines naming what changed: arch, part, entry."""
    lines: list[str] = []
    for arch in sorted(set(recorded) | set(current)):
        if arch not in current or arch not in recorded:
            lines.append(f"{arch}: {'missing now' if arch not in current else 'new'}")
            continue
        for part in ("kernels", "library"):
            old, new = recorded[arch].get(part, {}), current[arch].get(part, {})
            for name in sorted(set(old) | set(new)):
                if old.get(name) != new.get(name):
                    state = "removed" if name not in new else "added" if name not in old else "changed"
                    lines.append(f"{arch} {part}: {name} {state}")
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--update", action="store_true", help="record the current outputs")
    ap.add_argument("--arch", action="append", help="only this architecture (repeatable; compare only)")
    args = ap.parse_args(argv)
    from tests.shared import dev_logic_files, use_shared_custom_kernels

    use_shared_custom_kernels()
    current = all_digests(dev_logic_files())
    if args.update:
        RECORD.write_text(json.dumps(current, indent=1, sort_keys=True) + "\n")
        print(f"recorded {sum(len(a['kernels']) for a in current.values())} kernels and "
              f"{sum(len(a['library']) for a in current.values())} library files to {RECORD}")
        return 0
    recorded = json.loads(RECORD.read_text())
    if args.arch:
        recorded = {a: v for a, v in recorded.items() if a in args.arch}
        current = {a: v for a, v in current.items() if a in args.arch}
    diff = differences(recorded, current)
    print("\n".join(diff) or "dev-set outputs identical to the record")
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
