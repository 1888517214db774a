"""`tensile-lite` command line: one subcommand per module in `tensile_lite.commands`."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence

from tensile_lite import __version__
from tensile_lite.errors import TensileLiteError

# Each module defines NAME, HELP, DESCRIPTION, add_arguments(parser) and run(args) -> int.
COMMAND_MODULES: tuple[str, ...] = (
    "inspect_logic",
    "cmake_prefix",
    "build_metadata",
    "inspect_dat",
    "coverage",
    "verify_library",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensile-lite",
        description="Build and inspect hipBLASLt kernel libraries (a rewrite of TensileCreateLibrary).",
    )
    parser.add_argument("--version", action="version", version=f"tensile-lite {__version__}")
    parser.add_argument("--debug", action="store_true", help="show a traceback on errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        mod = importlib.import_module(f"tensile_lite.commands.{name}")
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.DESCRIPTION)
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show a traceback on errors")
        mod.add_arguments(p)
        p.set_defaults(_run=mod.run)
    return parser


def run_guarded(func, args: argparse.Namespace) -> int:
    """Run a command; user errors become one line on stderr and exit code 2."""
    try:
        return int(func(args) or 0)
    except TensileLiteError as exc:
        if getattr(args, "debug", False):
            traceback.print_exc()
        print(f"error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader went away (`... | head`): stop quietly, and keep Python from complaining at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return 2
    return run_guarded(args._run, args)
