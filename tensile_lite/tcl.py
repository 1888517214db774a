"""`TensileCreateLibrary`: the drop-in build driver.

logic files -> model -> (supported solutions) -> library plan -> kernels -> code objects -> .dat files.
Everything is written into a private staging folder inside OutputPath and moved into OutputPath/library
only when the whole build succeeded; the manifest (CMake's stamp) is written last. A failed or interrupted
run therefore never leaves a library that looks complete.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

from tensile_lite.build import build_library
from tensile_lite.errors import TensileLiteError
from tensile_lite.tcl_args import TclRequest, build_parser, to_request


def _log(req: TclRequest, level: int, msg: str) -> None:
    if req.verbose >= level:
        print(msg, file=sys.stderr, flush=True)


def run(req: TclRequest) -> int:
    started = time.monotonic()
    for flag in req.ignored:
        _log(req, 2, f"note: {flag} is accepted for compatibility and has no effect")
    out = Path(req.output_path)
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".tensile-lite-staging-", dir=out))
    try:
        summary = build_library(req, staging, log=lambda level, msg: _log(req, level, msg))
        if req.manifest_only:  # the files it lists are not made: only the stamp is written
            (out / "library").mkdir(parents=True, exist_ok=True)
            _write_manifest(out / "library", summary.files)
        else:
            _publish(staging, out / "library", summary.files)
        kept = staging / "build_tmp"
        if kept.is_dir():  # --keep-build-tmp: the kernels' .s and .o, for debugging
            shutil.rmtree(out / "build_tmp", ignore_errors=True)
            os.replace(kept, out / "build_tmp")
            _log(req, 1, f"kept each kernel's .s and .o in {out / 'build_tmp'}")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _log(req, 1, f"{summary.describe()} in {time.monotonic() - started:.1f} s")
    return 0


def _publish(staging: Path, library: Path, files: Sequence[str]) -> None:
    """Move the finished files into place, then write the manifest last (CMake's build stamp)."""
    library.mkdir(parents=True, exist_ok=True)
    manifest = library / "TensileManifest.txt"
    manifest.unlink(missing_ok=True)  # an old stamp must not survive a half-replaced library
    for name in files:
        os.replace(staging / "library" / name, library / name)
    _write_manifest(library, files)


def _write_manifest(library: Path, files: Sequence[str]) -> None:
    manifest = library / "TensileManifest.txt"
    tmp = library / f".TensileManifest.txt.tmp-{os.getpid()}"
    tmp.write_text("".join(f"{(library / name).resolve()}\n" for name in files))
    os.replace(tmp, manifest)


def main(argv: Sequence[str] | None = None) -> int:
    ns = build_parser().parse_args(argv)
    try:
        return run(to_request(ns))
    except TensileLiteError as exc:
        if ns.debug:
            traceback.print_exc()
        print(f"TensileCreateLibrary: error: {exc.one_line()}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("TensileCreateLibrary: interrupted; temporary files removed, library left untouched",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
