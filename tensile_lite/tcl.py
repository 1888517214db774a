"""`TensileCreateLibrary`: the drop-in build driver.

logic files -> model -> (supported solutions) -> library plan -> kernels -> code objects -> .dat files.
Everything is written into a private staging folder inside OutputPath and moved into OutputPath/library
(per-architecture folders included) only when the whole build succeeded, the masters and mapping files
last; the manifest (2024 CMake's stamp; 7.x has none, its CMake stamps exit 0 itself) after them. A
failed or interrupted run therefore never leaves a library that looks complete. OutputPath is locked for the build; staging and
temporaries are removed on every exit path (signals included, see guard.py), and those of a killed run
are removed by the next one (workdirs.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tensile_lite.build import BuildSummary, build_library
from tensile_lite.errors import OutputError, TensileLiteError
from tensile_lite.guard import run_guarded
from tensile_lite.interfaces import HIPBLASLT_2024, get_interface
from tensile_lite.tcl_args import TclRequest, build_parser, to_request
from tensile_lite.workdirs import locked_folder, move_file, move_tree, private_dir, sweep_stale

FAILED_KERNELS = "failed-kernels"  # OutputPath/failed-kernels: a failing kernel's assembly, kept for the user
MANIFEST = "TensileManifest.txt"


def _log(req: TclRequest, level: int, msg: str) -> None:
    if req.verbose >= level:
        print(msg, file=sys.stderr, flush=True)


def _blocking_ancestor(path: Path) -> Path | None:
    """The nearest existing ancestor of `path` that is not a folder (so nothing can be created below it)."""
    for parent in path.parents:
        if parent.exists():
            return None if parent.is_dir() else parent
    return None


def prepare_output(out: Path) -> None:
    """Create OutputPath, or say in one line why it cannot be used (before any work is done)."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"OutputPath {out} exists and is not a folder")
    blocker = _blocking_ancestor(out)
    if blocker is not None:
        raise OutputError(f"cannot create OutputPath {out}: {blocker} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create OutputPath {out}: {exc.strerror or exc}") from None
    if not os.access(out, os.W_OK | os.X_OK):  # access(2) reports a read-only filesystem even to root
        raise OutputError(f"OutputPath {out} is not writable (read-only filesystem or no permission)")
    library = out / "library"
    if library.exists() and not library.is_dir():
        raise OutputError(f"{library} exists and is not a folder; the library is written there, remove it")


def _clean_leftovers(req: TclRequest, out: Path, tmp_parent: Path) -> None:
    """What killed runs left (their locks are gone) and the previous run's failed kernels."""
    removed = sweep_stale(out) + sweep_stale(tmp_parent)
    for path in removed:
        _log(req, 1, f"note: removed {path}, left by a build that was killed")
    shutil.rmtree(out / FAILED_KERNELS, ignore_errors=True)


def run(req: TclRequest) -> int:
    started = time.monotonic()
    for flag in req.ignored:
        _log(req, 2, f"note: {flag} is accepted for compatibility and has no effect")
    interface = get_interface(req.interface)
    if req.manifest_only and not interface.manifest:
        raise TensileLiteError(f"--generate-manifest-and-exit: interface {interface.name} has no manifest "
                               "(its CMake stamps the build itself)")
    out = Path(req.output_path)
    prepare_output(out)
    tmp_parent = Path(tempfile.gettempdir())
    # One build per OutputPath at a time: the lock is on the folder itself, so nothing is left in it.
    with locked_folder(out, req.lock_timeout, on_wait=lambda msg: _log(req, 1, msg)):
        _clean_leftovers(req, out, tmp_parent)
        # Staging inside OutputPath: the same filesystem as the library, so publishing is a rename.
        with private_dir(out, "staging") as staging:
            summary = build_library(req, staging, log=lambda level, msg: _log(req, level, msg),
                                    failed_dir=out / FAILED_KERNELS)
            if req.shard is not None:  # a shard folder: its objects and manifest are written; no library
                pass
            elif req.manifest_only:  # the files it lists are not made: only the stamp is written
                (out / "library").mkdir(parents=True, exist_ok=True)
                _write_manifest(out / "library", summary.files)
            else:
                _publish(staging, out / "library", summary, write_manifest=interface.manifest)
            kept = staging / "build_tmp"
            if kept.is_dir():  # --keep-build-tmp: the kernels' .s and .o, for debugging
                shutil.rmtree(out / "build_tmp", ignore_errors=True)
                move_tree(kept, out / "build_tmp")
                _log(req, 1, f"kept each kernel's .s and .o in {out / 'build_tmp'}")
    _log(req, 1, f"{summary.describe()} in {time.monotonic() - started:.1f} s")
    return 0


def _publish(staging: Path, library: Path, summary: BuildSummary, write_manifest: bool) -> None:
    """Move the finished files into place, the files a runtime opens first (masters, mappings) last, then
    write the manifest (2024's CMake stamp) when the interface has one."""
    library.mkdir(parents=True, exist_ok=True)
    # an old stamp must not survive a half-replaced library, nor a build of an interface that has none
    (library / MANIFEST).unlink(missing_ok=True)
    for folder in summary.folders:  # one per requested architecture, even when it stays empty
        (library / folder).mkdir(parents=True, exist_ok=True)
    roots = set(summary.roots)
    for name in [f for f in summary.files if f not in roots] + [f for f in summary.files if f in roots]:
        (library / name).parent.mkdir(parents=True, exist_ok=True)
        move_file(staging / "library" / name, library / name)
    if write_manifest:
        _write_manifest(library, summary.files)


def _write_manifest(library: Path, files: Sequence[str]) -> None:
    manifest = library / MANIFEST
    tmp = library / f".{MANIFEST}.tmp-{os.getpid()}"
    try:
        tmp.write_text("".join(f"{(library / name).resolve()}\n" for name in files))
        os.replace(tmp, manifest)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)


def main(argv: Sequence[str] | None = None, default_interface: str = HIPBLASLT_2024,
         prog: str = "TensileCreateLibrary") -> int:
    """The command line of every entry point; each passes the interface it serves when --interface is not
    given (the `TensileCreateLibrary` script: 2024; the 7.x shims in rocm7_root: theirs) and its name."""
    ns = build_parser(default_interface, prog).parse_args(argv)
    return run_guarded(lambda: run(to_request(ns, default_interface)), prefix=f"{prog}: ", debug=ns.debug)


if __name__ == "__main__":
    raise SystemExit(main())
