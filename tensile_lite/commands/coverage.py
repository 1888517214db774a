"""`tensile-lite coverage`: which solutions of a set of logic files the kernel writer builds, and what
stands in the way of the others, ranked by how many solutions each missing feature blocks."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from typing import Any

from tensile_lite.asm.gemm import decide
from tensile_lite.custom import CustomBuild
from tensile_lite.custom.locate import ENV as CUSTOM_ENV
from tensile_lite.custom.locate import FLAG as CUSTOM_FLAG
from tensile_lite.logic import Read, Unreadable, scan_logic
from tensile_lite.model import kernel_key

NAME = "coverage"
HELP = "report which solutions the kernel writer supports, and the missing features ranked"
DESCRIPTION = (
    "Read hipBLASLt logic files (files or folders, searched recursively for *.yaml) and report, per "
    "architecture, how many solutions and distinct kernels the kernel writer can build, then every "
    "missing feature with the number of solutions it blocks (a solution blocked by several features "
    "counts for each), overall and per architecture. A file that fails to read is listed under its "
    "architecture (read from the file's head) with the reason, the others are still read, and the exit "
    "code is 2."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="logic files or folders")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument(CUSTOM_FLAG, default=None, metavar="DIR",
                   help="hipBLASLt's tensilelite/Tensile/CustomKernels folder (or a source root holding it) for "
                        f"solutions naming a CustomKernelName (default: ${CUSTOM_ENV}, else found walking up from "
                        "the logic path)")


def collect(paths: list[str], custom_kernels_dir: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The coverage report (the `--json` document) and the files that failed to read."""
    solutions: Counter[str] = Counter()
    supported: Counter[str] = Counter()
    kernels: dict[str, set[str]] = defaultdict(set)
    supported_kernels: dict[str, set[str]] = defaultdict(set)
    custom: Counter[str] = Counter()  # solutions built from a custom kernel's own assembly
    blocked: Counter[str] = Counter()
    blocked_in: dict[str, Counter[str]] = defaultdict(Counter)
    unreadable: dict[str, list[str]] = defaultdict(list)
    left_out: dict[str, list[str]] = defaultdict(list)
    errors = []
    # the reader loop the build and check-logic use
    for item in scan_logic(paths, custom_kernels_dir=custom_kernels_dir):
        if isinstance(item, Unreadable):
            errors.append({"file": str(item.path), "arch": item.arch_label, "error": item.error.one_line()})
            unreadable[item.arch_label].append(str(item.path))
            continue
        if not isinstance(item, Read):  # no architecture was asked for, so every file is read
            continue
        lf, path = item.logic, item.path
        if lf.library_writer_gap:
            left_out[lf.arch].append(f"{path}: {lf.library_writer_gap}")
        for sol in lf.solutions:
            arch = sol.arch
            key = kernel_key(sol)
            solutions[arch] += 1
            kernels[arch].add(key)
            verdict = decide(sol)  # the gate the build and the writer use
            reasons = verdict.reasons
            custom[arch] += isinstance(verdict, CustomBuild)
            if reasons:
                blocked.update(reasons)
                blocked_in[arch].update(reasons)
            else:
                supported[arch] += 1
                supported_kernels[arch].add(key)
    archs = {arch: {"solutions": solutions[arch], "supported": supported[arch], "kernels": len(kernels[arch]),
                    "supported_kernels": len(supported_kernels[arch]), "custom_kernel_solutions": custom[arch],
                    "blocked_by": _ranked(blocked_in[arch]), "unreadable_files": unreadable[arch],
                    "files_left_out_of_libraries": left_out[arch]}
             for arch in sorted(set(solutions) | set(unreadable))}
    report = {
        "architectures": archs,
        "total": {"solutions": sum(solutions.values()), "supported": sum(supported.values()),
                  "custom_kernel_solutions": sum(custom.values())},
        "missing_features": _ranked(blocked),
    }
    return report, errors


def _ranked(blocked: Counter[str]) -> list[dict[str, Any]]:
    return [{"feature": f, "solutions": n} for f, n in sorted(blocked.items(), key=lambda kv: (-kv[1], kv[0]))]


def run(args: argparse.Namespace) -> int:
    report, errors = collect(args.paths, args.custom_kernels_dir)
    if args.json:
        json.dump(report, sys.stdout, indent=1)
        print()
    else:
        _print(report)
    for err in errors:
        print(f"error: {err['error']}", file=sys.stderr)
    if not report["architectures"] and not errors:
        print("error: no solutions found under " + ", ".join(args.paths), file=sys.stderr)
        return 2
    return 2 if errors else 0


def _print(report: dict[str, Any]) -> None:
    header = ("arch", "solutions", "supported", "kernels", "supported kernels", "of them custom")
    rows = [header] + [(arch, str(v["solutions"]), str(v["supported"]), str(v["kernels"]),
                        str(v["supported_kernels"]), str(v["custom_kernel_solutions"]))
                       for arch, v in report["architectures"].items()]
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths, strict=True))))
    total = report["total"]
    print(f"total: {total['supported']} of {total['solutions']} solutions supported "
          f"({total['custom_kernel_solutions']} of them from custom kernels)")
    if report["missing_features"]:
        print("missing features (solutions blocked):")
        width = max(len(str(m["solutions"])) for m in report["missing_features"])
        for m in report["missing_features"]:
            print(f"  {str(m['solutions']).rjust(width)}  {m['feature']}")
    per_arch = [(arch, v) for arch, v in report["architectures"].items()
                if v["blocked_by"] or v["unreadable_files"] or v["files_left_out_of_libraries"]]
    if per_arch:
        print("per architecture:")
    for arch, v in per_arch:
        if v["blocked_by"]:
            print(f"  {arch}: blocked by " + ", ".join(f"{m['feature']} ({m['solutions']})" for m in v["blocked_by"]))
        for path in v["unreadable_files"]:
            print(f"  {arch}: unreadable file {path} (reason below)")
        for line in v["files_left_out_of_libraries"]:
            print(f"  {arch}: left out of the library: {line}")
