"""ExactLogic side files: a GridBased table kept beside its logic file reads as the inline table does.

The side files are made here, from the formats as docs/rocm7_library_types.md describes them (no real
ones exist in ../shared/logic7): the test's own small encoders, independent of the reader.
"""

from __future__ import annotations

import csv
import gzip
import io
import lzma
import struct
from pathlib import Path
from typing import Any

import pytest
import yaml

import tensile_lite.sample
from tensile_lite.cli import main
from tensile_lite.errors import LogicError
from tensile_lite.logic import read_logic_file

GOOD = next(tensile_lite.sample.path().rglob("*HHS_BH.yaml"))  # gfx90a GridBased, list form, inline table


def _data() -> list[Any]:
    """The sample with a larger table: sizes that go down as well as up (negative deltas in the columnar
    form), a size past 2**31 and speeds that are not round."""
    data = yaml.load(GOOD.read_text(), Loader=yaml.CSafeLoader)
    n = len(data[5])
    data[7] = [[[(i * 7919) % 5000 + 1, 4096 - i * 64, 1 + i % 3, 2**31 + i if i == 5 else 128 * (i + 1)],
                [i % n, round(1000.0 / (i + 3), 6)]] for i in range(40)]
    return data


def _inline(tmp_path: Path) -> Path:
    path = tmp_path / "inline.yaml"
    path.write_text(yaml.safe_dump(_data(), sort_keys=False))
    return path


def _csv(rows: list[Any], speed: bool, crlf: bool) -> bytes:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, lineterminator="\r\n" if crlf else "\n")
    writer.writerow(["M", "N", "batch", "K", "solutionIdx"] + (["speed"] if speed else []))
    for key, (index, value) in rows:
        writer.writerow([*key, index] + ([repr(float(value))] if speed else []))
    return buf.getvalue().encode("ascii")


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _zigzag(value: int) -> int:
    return value << 1 if value >= 0 else (-value << 1) - 1


def _tlxl(rows: list[Any], version: int) -> bytes:
    cols = bytearray()
    for c in range(4):
        previous = 0
        for key, _ in rows:
            cols += _uvarint(_zigzag(key[c] - previous))
            previous = key[c]
    for _, (index, _speed) in rows:
        cols += _uvarint(index)
    head = b"TLXL" + bytes([version]) + _uvarint(len(rows))
    if version == 1:
        return head + bytes(cols)
    speeds = [float(v) for _, (_i, v) in rows]
    return head + _uvarint(len(cols)) + bytes(cols) + bytes(len(rows)) + struct.pack(f"<{len(speeds)}d", *speeds)


def _encode(kind: str, rows: list[Any]) -> tuple[str, bytes]:
    """(suffix, bytes) of a side file holding `rows` in format `kind`."""
    if kind == "csv.gz":
        return ".csv.gz", gzip.compress(_csv(rows, speed=True, crlf=True), mtime=0)
    if kind == "csv.gz-5":
        return ".csv.gz", gzip.compress(_csv(rows, speed=False, crlf=True), mtime=0)
    if kind == "csv.xz":
        return ".exactlogic.csv.xz", lzma.compress(_csv(rows, speed=True, crlf=False))
    if kind == "csv.xz-5":
        return ".exactlogic.csv.xz", lzma.compress(_csv(rows, speed=False, crlf=False))
    version = 1 if kind == "bin.xz-1" else 2
    return ".exactlogic.bin.xz", lzma.compress(_tlxl(rows, version))


def _split(tmp_path: Path, kind: str, rows: list[Any] | None = None) -> tuple[Path, Path, list[Any]]:
    """The sample with its table moved to a side file of `kind`: (logic path, side path, the rows)."""
    data = _data()
    table = data[7] if rows is None else rows
    data[7] = None
    logic = tmp_path / "split.yaml"
    logic.write_text(yaml.safe_dump(data, sort_keys=False))
    suffix, blob = _encode(kind, table)
    side = tmp_path / ("split.yaml" + suffix)
    side.write_bytes(blob)
    return logic, side, table


KINDS = ["csv.gz", "csv.gz-5", "csv.xz", "csv.xz-5", "bin.xz-1", "bin.xz-2"]


@pytest.mark.parametrize("kind", KINDS)
def test_side_table_reads_as_the_inline_table(tmp_path, kind):
    inline = read_logic_file(_inline(tmp_path))
    assert len(inline.table) == 40 and len({r.speed for r in inline.table}) == 40
    logic, _, _ = _split(tmp_path, kind)
    lf = read_logic_file(logic)
    assert [(r.sizes, r.solution) for r in lf.table] == [(r.sizes, r.solution) for r in inline.table]
    # GridBased drops the speed; formats that store it give it back exactly
    if kind in ("csv.gz", "csv.xz", "bin.xz-2"):
        assert [r.speed for r in lf.table] == [r.speed for r in inline.table]
    else:
        assert {r.speed for r in lf.table} == {0.0}


def test_side_table_reaches_the_library(tmp_path):
    logic, _, _ = _split(tmp_path, "bin.xz-2")
    out_inline, out_side = tmp_path / "a", tmp_path / "b"
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / GOOD.name).write_bytes(_inline(tmp_path).read_bytes())
    assert main(["build-metadata", str(tmp_path / "one"), str(out_inline)]) == 0
    (tmp_path / "two").mkdir()
    for p in (logic, *tmp_path.glob("split.yaml.*")):
        (tmp_path / "two" / p.name.replace("split", GOOD.stem)).write_bytes(p.read_bytes())
    assert main(["build-metadata", str(tmp_path / "two"), str(out_side)]) == 0
    names = sorted(p.name for p in (out_inline / "library").glob("*.dat"))
    assert names and names == sorted(p.name for p in (out_side / "library").glob("*.dat"))
    for name in names:
        assert (out_inline / "library" / name).read_bytes() == (out_side / "library" / name).read_bytes()


def _error(logic: Path) -> str:
    with pytest.raises(LogicError) as info:
        read_logic_file(logic)
    line = info.value.one_line()
    assert "\n" not in line and str(logic) in line
    return line


@pytest.mark.parametrize("kind", ["csv.gz", "csv.xz", "bin.xz-2"])
def test_corrupt_side_file_is_one_line_naming_both_files(tmp_path, kind):
    logic, side, _ = _split(tmp_path, kind)
    side.write_bytes(side.read_bytes()[:-7])  # truncated
    assert str(side) in _error(logic)
    side.write_bytes(b"garbage")
    assert str(side) in _error(logic)


def test_bad_contents_are_named(tmp_path):
    logic, side, rows = _split(tmp_path, "csv.xz")
    side.write_bytes(lzma.compress(b"M,N,K\n1,2,3\n"))
    assert "header" in _error(logic)
    side.write_bytes(lzma.compress(_tlxl(rows, 3)))
    side.rename(side.with_name("split.yaml.exactlogic.bin.xz"))
    assert "TLXL version 3" in _error(logic)


def test_out_of_range_solution_names_the_side_file(tmp_path):
    rows = _data()[7]
    rows[0] = [rows[0][0], [999, 1.0]]
    logic, side, _ = _split(tmp_path, "bin.xz-1", rows)
    line = _error(logic)
    assert str(side) in line and "solution 999" in line


def test_inline_table_and_side_file_together_are_refused(tmp_path):
    logic, side, _ = _split(tmp_path, "csv.gz")
    logic.write_bytes(_inline(tmp_path).read_bytes())  # the table inline again
    line = _error(logic)
    assert str(side) in line and "inline" in line


def test_two_side_files_are_refused(tmp_path):
    logic, _, rows = _split(tmp_path, "csv.gz")
    suffix, blob = _encode("bin.xz-2", rows)
    (tmp_path / ("split.yaml" + suffix)).write_bytes(blob)
    assert "2 ExactLogic side files" in _error(logic)


def test_side_file_of_another_library_type_is_refused(tmp_path):
    logic, side, _ = _split(tmp_path, "csv.xz")
    data = _data()
    data[7], data[11] = None, "Equality"
    logic.write_text(yaml.safe_dump(data, sort_keys=False))
    line = _error(logic)
    assert str(side) in line and "GridBased" in line
