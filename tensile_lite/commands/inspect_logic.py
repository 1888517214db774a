"""`tensile-lite inspect-logic`: what a set of logic files holds, and whether it reads cleanly."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TypedDict

from tensile_lite.custom.locate import ENV as CUSTOM_ENV
from tensile_lite.custom.locate import FLAG as CUSTOM_FLAG
from tensile_lite.logic import Read, Unreadable, scan_logic
from tensile_lite.model import kernel_key

NAME = "inspect-logic"
HELP = "summarise logic files: architecture, library type, problem type, solutions, distinct kernels"
DESCRIPTION = (
    "Read hipBLASLt logic files (files or folders, searched recursively for *.yaml) and print, per file, "
    "the architecture, CU count, library type, problem type, number of solutions and of distinct kernels, "
    "then a total. Files that fail to read are listed with their architecture (read from the file's head) "
    "and the reason, and the others are still read; the exit code is 2 if any file failed."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="logic files or folders")
    p.add_argument("--json", action="store_true", help="print one JSON document instead of a table")
    p.add_argument(CUSTOM_FLAG, default=None, metavar="DIR",
                   help="hipBLASLt's tensilelite/Tensile/CustomKernels folder (or a source root holding it) for "
                        f"solutions naming a CustomKernelName (default: ${CUSTOM_ENV}, else found walking up from "
                        "the logic path)")


class _FileRow(TypedDict):
    """One logic file's line of the report (a JSON object with --json)."""

    file: str
    arch: str
    cu_count: int | None
    library_type: str
    problem_type: str
    solutions: int
    kernels: int
    notes: list[str]


def run(args: argparse.Namespace) -> int:
    found = 0
    rows: list[_FileRow] = []
    errors: list[dict[str, str]] = []
    all_kernels: set[str] = set()
    total_solutions = 0
    for item in scan_logic(args.paths, custom_kernels_dir=args.custom_kernels_dir):  # the reader loop the build and check-logic use
        found += 1
        if isinstance(item, Unreadable):
            errors.append({"file": str(item.path), "arch": item.arch_label, "error": item.error.one_line()})
            continue
        if not isinstance(item, Read):  # no architecture was asked for, so every file is read
            continue
        lf, path = item.logic, item.path
        keys = {kernel_key(s) for s in lf.solutions}
        all_kernels |= keys
        total_solutions += len(lf.solutions)
        rows.append({"file": str(path), "arch": lf.arch, "cu_count": lf.cu_count, "library_type": lf.library_type,
                     "problem_type": lf.problem_type.name, "solutions": len(lf.solutions), "kernels": len(keys),
                     "notes": list(lf.notes)})
    total = {"files": len(rows), "solutions": total_solutions, "kernels": len(all_kernels)}
    if args.json:
        json.dump({"files": rows, "total": total, "errors": errors}, sys.stdout, indent=1)
        print()
    else:
        _print_table(rows, total)
        for err in errors:
            print(f"error: [{err['arch']}] {err['error']}", file=sys.stderr)
    if not found:
        print("error: no *.yaml logic files found under " + ", ".join(args.paths), file=sys.stderr)
        return 2
    return 2 if errors else 0


def _print_table(rows: list[_FileRow], total: dict[str, int]) -> None:
    header = ("arch", "CU", "library", "solutions", "kernels", "problem type", "file")
    table = [header] + [(r["arch"], str(r["cu_count"] or "-"), r["library_type"], str(r["solutions"]),
                         str(r["kernels"]), r["problem_type"], r["file"]) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header) - 1)]
    for row in table:
        print("  ".join(c.ljust(w) if i in (0, 2, 5) else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False)))
              + "  " + row[-1])
    print(f"total: {total['files']} files, {total['solutions']} solutions, {total['kernels']} distinct kernels")
