"""`tensile-lite` command line: one subcommand per module in `tensile_lite.commands`."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Sequence

from tensile_lite import __version__
from tensile_lite.errors import exit_codes_help
from tensile_lite.guard import quiet_broken_pipe
from tensile_lite.guard import run_guarded as _guarded

# Each module defines NAME, HELP, DESCRIPTION, add_arguments(parser) and run(args) -> int.
COMMAND_MODULES: tuple[str, ...] = (
    "inspect_logic",
    "cmake_prefix",
    "rocm7_root",
    "check_logic",
    "build_metadata",
    "inspect_dat",
    "coverage",
    "verify_library",
    "merge",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensile-lite",
        description="Build and inspect hipBLASLt kernel libraries (a rewrite of TensileCreateLibrary).",
        epilog=exit_codes_help(), formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tensile-lite {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        mod = importlib.import_module(f"tensile_lite.commands.{name}")
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.DESCRIPTION, epilog=exit_codes_help(),
                           formatter_class=argparse.RawDescriptionHelpFormatter)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show a traceback on errors")
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def run_guarded(func: Callable[[argparse.Namespace], int], args: argparse.Namespace) -> int:
    """Run a command; every failure becomes one `error:` line on stderr and its exit code (errors.EXIT_CODES)."""
    return _guarded(lambda: func(args), prefix="", debug=getattr(args, "debug", False), extra=quiet_broken_pipe)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    return run_guarded(args._run, args)
