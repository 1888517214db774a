"""Same logic, same bytes: across runs, input orders, hash seeds and processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tensile_lite.library import (
    FORMATS,
    LibraryPlan,
    build_plan,
    encode,
    master_document,
    placeholder_document,
)
from tensile_lite.model import LogicFile
from tests.shared import shared_dir


def _bytes(plan: LibraryPlan, fmt: str, archs: set[str] | None = None) -> dict[str, bytes]:
    out = {}
    for ap in plan.archs:
        if archs is not None and ap.arch not in archs:
            continue
        out[ap.master_name] = encode(master_document(ap), fmt)
        for ph in ap.placeholders:
            out[ph.name] = encode(placeholder_document(ph), fmt)
    return out


def test_same_bytes_across_runs_and_input_orders(dev_files: list[LogicFile], dev_plan: LibraryPlan):
    first = _bytes(dev_plan, "msgpack")
    assert _bytes(build_plan(dev_files), "msgpack") == first
    assert _bytes(build_plan(list(reversed(dev_files))), "msgpack") == first
    shuffled = dev_files[1::2] + dev_files[::2]
    assert _bytes(build_plan(shuffled), "msgpack") == first


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f != "msgpack"])
def test_other_formats_are_deterministic_too(dev_files: list[LogicFile], fmt: str):
    small = {"gfx908", "gfx941", "gfx1201"}
    files = [lf for lf in dev_files if lf.arch in small]
    assert _bytes(build_plan(files), fmt) == _bytes(build_plan(list(reversed(files))), fmt)


def _run_cli(logic: Path, out: Path, seed: str, fmt: str) -> dict[str, bytes]:
    env = {**os.environ, "PYTHONHASHSEED": seed}
    subprocess.run([sys.executable, "-m", "tensile_lite", "build-metadata", str(logic), str(out),
                    "--library-format", fmt], check=True, capture_output=True, env=env)
    files = {p.name: p.read_bytes() for p in (out / "library").iterdir()}
    # The manifest holds absolute paths, so compare it relative to its own folder.
    files["TensileManifest.txt"] = files["TensileManifest.txt"].replace(str((out / "library").resolve()).encode(),
                                                                          b"<dir>")
    return files


def test_separate_processes_with_different_hash_seeds(tmp_path: Path):
    logic = shared_dir("logic", "asm_full", "arcturus")
    a = _run_cli(logic, tmp_path / "a", "1", "msgpack-zstd")
    b = _run_cli(logic, tmp_path / "b", "2", "msgpack-zstd")
    assert a == b
    assert len(a) == 4  # master, two placeholders, manifest
