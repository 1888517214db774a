"""Damaged libraries: inspect-dat and verify-library validate what they read. A damaged .dat, .co or .hsaco
is one `error:` line naming the file and what is wrong (exit 2), never a traceback, a pass or a skip."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tensile_lite.cli import main
from tensile_lite.errors import EXIT_INPUT
from tensile_lite.library.formats import encode, read_dat
from tests.reliability.helpers import assert_one_error

FLIP_SEEDS = range(40)


@pytest.fixture
def library(built_sample: Path, tmp_path: Path) -> Path:
    out = tmp_path / "lib"
    shutil.copytree(built_sample, out)
    return out / "library"


def _placeholder(library: Path) -> Path:
    return next(p for p in library.glob("TensileLibrary_*.dat") if "_lazy_" not in p.name)


def _flip(data: bytes, seed: int, count: int = 3) -> bytes:
    rng = random.Random(seed)
    out = bytearray(data)
    for _ in range(count):
        out[rng.randrange(len(out))] = rng.randrange(256)
    return bytes(out)


def _rewrite(path: Path, change: Callable[[Any], None]) -> None:
    doc = read_dat(path)
    change(doc)
    path.write_bytes(encode(doc, "msgpack"))


def test_inspect_dat_never_tracebacks_on_flipped_bytes(library: Path, tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    for name in (_placeholder(library).name, "TensileLibrary_lazy_gfx942.dat"):
        original = (library / name).read_bytes()
        codes = set()
        for seed in FLIP_SEEDS:
            damaged = tmp_path / name
            damaged.write_bytes(_flip(original, seed))
            rc = main(["inspect-dat", str(damaged)])
            err = capsys.readouterr().err
            assert "Traceback" not in err, (seed, err)
            if rc:
                assert rc == EXIT_INPUT and str(damaged) in err, (seed, err)
            codes.add(rc)
        assert EXIT_INPUT in codes  # most flips are caught (some only change a number or a letter)


DAMAGE: dict[str, tuple[Callable[[Any], None], str]] = {
    "entry_not_a_map": (lambda d: d["solutions"].__setitem__(0, 7), "solutions[0]"),
    "kernel_name_a_number": (lambda d: d["solutions"][0].__setitem__("kernelName", 12), "kernelName"),
    "size_mapping_missing": (lambda d: d["solutions"][0].pop("sizeMapping"), "sizeMapping"),
    "index_twice": (lambda d: d["solutions"][1].__setitem__("index", d["solutions"][0]["index"]), "twice"),
    "table_row_garbled": (lambda d: d["library"]["rows"][0]["library"]["table"].__setitem__(0, "x"), "table[0]"),
    "unknown_node": (lambda d: d["library"].__setitem__("type", "Bogus"), "Bogus"),
}


@pytest.mark.parametrize("case", sorted(DAMAGE))
def test_structural_damage_is_named_by_both_commands(case: str, library: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    change, needle = DAMAGE[case]
    dat = _placeholder(library)
    _rewrite(dat, change)
    for argv in (["inspect-dat", str(dat)], ["verify-library", str(library.parent), "--quiet"]):
        assert main(argv) == EXIT_INPUT, argv
        assert_one_error(capsys.readouterr().err, str(dat), "damaged", needle)


def test_verify_refuses_an_entry_no_build_writes(library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dat = _placeholder(library)
    _rewrite(dat, lambda d: [s["sizeMapping"].__setitem__("workGroup", [7, 1, 1]) for s in d["solutions"]])
    assert main(["verify-library", str(library.parent), "--quiet"]) == EXIT_INPUT
    assert_one_error(capsys.readouterr().err, str(dat), "damaged entry", "whole waves")


@pytest.mark.parametrize(("victim", "damage"), [("hsaco", "truncated"), ("hsaco", "garbage"), ("co", "truncated"),
                                               ("co", "garbage")])
def test_verify_opens_every_code_object(victim: str, damage: str, library: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = library / "Kernels.so-000-gfx942.hsaco" if victim == "hsaco" else _placeholder(library).with_suffix(".co")
    data = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:
        path.write_bytes(_flip(data[:64], 1, 16) + bytes(len(data) - 64))
    # --kernels 1: the helper code object is needed by no kernel, and is still opened
    assert main(["verify-library", str(library.parent), "--quiet", "--kernels", "1"]) == EXIT_INPUT
    assert_one_error(capsys.readouterr().err, str(path))


def test_verify_never_passes_silently_on_flipped_bytes(library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dat = _placeholder(library)
    original = dat.read_bytes()
    for seed in range(8):
        dat.write_bytes(_flip(original, seed))
        rc = main(["verify-library", str(library.parent), "--quiet", "--kernels", "1"])
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err, (seed, captured.err)
        assert rc in (0, 1, EXIT_INPUT), seed
        if rc == 0:  # the flip left a valid library (a number, a letter): then it verified for real
            assert "1 passed" in captured.out, (seed, captured.out)


def test_verify_fails_a_missing_code_object_by_kernel(library: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _placeholder(library).with_suffix(".co").unlink()
    assert main(["verify-library", str(library.parent), "--quiet"]) == 1  # failed, never passed or skipped
    assert "is missing" in capsys.readouterr().out
