"""`tensile-lite check-logic` (also 7.x's `TensileLogic ... --check-all` and `python -m tensilelite logic`):
validate a logic tree before a build: every selected file of the requested architectures read in full."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from tensile_lite.commands.rocm7_root import KNOWN_BUGS, root
from tensile_lite.custom.locate import ENV as CUSTOM_ENV
from tensile_lite.custom.locate import FLAG as CUSTOM_FLAG
from tensile_lite.errors import EXIT_INPUT, LogicError, Where, exit_codes_help
from tensile_lite.guard import run_guarded
from tensile_lite.logic import OtherArch, Read, Unreadable, scan_logic
from tensile_lite.logic.yamlload import load_yaml
from tensile_lite.tcl_args import parse_architectures

NAME = "check-logic"
HELP = "validate a logic tree the way hipBLASLt 7.x's TensileLogic step does (exit 2 if any file is bad)"
DESCRIPTION = (
    "Read every logic file below LOGIC that --logic-filter and --experimental select and that belongs to a "
    "requested architecture (others are never parsed beyond their head), in full: layout, problem type, "
    "every solution's parameters and the values derived from them, and that the architecture is one "
    "tensile-lite knows. Each bad file is one error line naming the file, the solution (SolutionIndex and "
    "name) and the key; then a summary line. Exit 2 if any file is bad. Accepts the command line "
    "hipBLASLt 7.x's CMake passes to TensileLogic (--architecture 'a;b' --use-bundled-known-bugs "
    "--check-all)."
)


@attrs.frozen(slots=True)
class KnownBug:
    """A documented exception: an error at this solution of this file (path relative to LOGIC) is shown
    as a note and does not fail the check."""

    path: str
    solution_name: str
    ticket: str = ""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("LogicPath", help="the logic root (hipBLASLt's library/ folder)")
    p.add_argument("--architecture", default="all",
                   help="architectures to check, separated by ';' or '_' (default: all)")
    p.add_argument("--logic-filter", default="*", metavar="GLOB",
                   help="LOGIC/**/<GLOB>.yaml as for the build; a GLOB ending in .yaml is taken as is")
    p.add_argument("--experimental", action="store_true",
                   help="also check files below a folder named Experimental (any case)")
    p.add_argument("--known-bugs", type=Path, default=None, metavar="FILE",
                   help="YAML list of documented exceptions: {version: 1, skips: [{path, solution_name, "
                        "ticket}]}, paths relative to LOGIC")
    p.add_argument("--use-bundled-known-bugs", action="store_true",
                   help="use the list shipped beside the 7.x shims (rocm7-root's "
                        "Tensile/TensileLogic/known_bugs.yaml)")
    checks = p.add_mutually_exclusive_group()
    checks.add_argument("--check-all", action="store_true", help="accepted: every check always runs")
    checks.add_argument("--check-only-custom-kernels", action="store_true",
                        help="accepted: every check always runs")
    p.add_argument(CUSTOM_FLAG, default=None, metavar="DIR",
                   help="hipBLASLt's tensilelite/Tensile/CustomKernels folder (or a source root holding it) for "
                        f"solutions naming a CustomKernelName (default: ${CUSTOM_ENV}, else found walking up from "
                        "LogicPath)")
    p.add_argument("--jobs", "-j", type=int, default=None, help="accepted: files are checked one at a time")
    p.add_argument("--cxx-compiler", default=None, help="accepted: no compiler is involved")
    p.add_argument("--verbose", "-v", type=int, default=1, help="0 errors only, 1 summary, 2 each file")


def _where(path: Path, item: str) -> Where:
    return Where(file=str(path), parameter=item)


def load_known_bugs(path: Path) -> tuple[KnownBug, ...]:
    """The documented exceptions of a known-bugs file; a malformed one is an error naming the entry."""
    data: Any = load_yaml(path)  # the logic reader's loader: the same defences, errors naming the file
    if data is None:
        return ()
    if not isinstance(data, Mapping) or data.get("version") != 1 or not isinstance(data.get("skips") or [], list):
        raise LogicError("a known-bugs list is a map {version: 1, skips: [...]}", _where(path, "version"))
    out = []
    for i, entry in enumerate(data.get("skips") or []):
        if not (isinstance(entry, Mapping) and isinstance(entry.get("path"), str)
                and isinstance(entry.get("solution_name"), str)):
            raise LogicError(f"skip {i} needs a path and a solution_name", _where(path, f"skips[{i}]"))
        out.append(KnownBug(entry["path"], entry["solution_name"], str(entry.get("ticket") or "")))
    return tuple(out)


def _known_bugs_file(args: argparse.Namespace) -> Path | None:
    if args.known_bugs is not None:
        return Path(args.known_bugs)
    if args.use_bundled_known_bugs:
        return root() / KNOWN_BUGS
    return None


def _known(item: Unreadable, logic_root: Path, bugs: Sequence[KnownBug]) -> KnownBug | None:
    name = item.error.where.solution_name
    if not name or not logic_root.is_dir():
        return None
    rel = item.path.relative_to(logic_root).as_posix()
    return next((b for b in bugs if b.solution_name == name and b.path == rel), None)


def run(args: argparse.Namespace) -> int:
    archs = parse_architectures(args.architecture)
    bugs_file = _known_bugs_file(args)
    bugs = load_known_bugs(bugs_file) if bugs_file is not None else ()
    root = Path(args.LogicPath)
    checked = solutions = other = 0
    bad: list[Unreadable] = []
    for item in scan_logic([root], args.logic_filter, experimental=args.experimental, architectures=archs,
                           known_targets=True, custom_kernels_dir=args.custom_kernels_dir):
        if isinstance(item, OtherArch):
            other += 1
        elif isinstance(item, Read):
            checked += 1
            solutions += len(item.logic.solutions)
            if args.verbose >= 2:
                print(f"ok [{item.logic.arch}] {item.path} ({len(item.logic.solutions)} solutions)")
        elif (bug := _known(item, root, bugs)) is not None:
            checked += 1
            print(f"note: known bug{f' {bug.ticket}' if bug.ticket else ''}, not counted: "
                  f"{item.error.one_line()}", file=sys.stderr)
        else:
            bad.append(item)
    for item in bad:
        print(f"error: [{item.arch_label}] {item.error.one_line()}", file=sys.stderr)
    scope = ", ".join(archs) or "every architecture"
    if not checked and not bad:
        print(f"error: no logic files of {scope} matching {args.logic_filter} under {root}", file=sys.stderr)
        return EXIT_INPUT
    if args.verbose >= 1 or bad:
        verdict = f"{len(bad)} cannot be read" if bad else "all valid"
        print(f"checked {checked + len(bad)} logic file(s) of {scope}, {solutions} solutions "
              f"({other} file(s) of other architectures not parsed): {verdict}")
    return EXIT_INPUT if bad else 0


def build_parser(prog: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=exit_codes_help(),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--debug", action="store_true", help="show a traceback on errors")
    add_arguments(p)
    return p


def main(argv: Sequence[str] | None = None, prog: str = "TensileLogic") -> int:
    """The validation step as its own program (the 7.x shims call this)."""
    args = build_parser(prog).parse_args(argv)
    return run_guarded(lambda: run(args), prefix=f"{prog}: ", debug=args.debug)

