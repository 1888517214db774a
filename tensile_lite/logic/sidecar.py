"""ExactLogic side files: the table of a GridBased logic file kept beside it instead of inline.

A 7.x logic file `<name>.yaml` may carry `ExactLogic: null` (list form: element 7 `null`) and keep its
table in one of three files next to it (docs/rocm7_library_types.md has the formats and where they are
described upstream):

- `<name>.yaml.csv.gz`: gzip'd CSV (`\\r\\n` or `\\n` lines);
- `<name>.yaml.exactlogic.csv.xz`: xz'd CSV (`\\n` lines);
- `<name>.yaml.exactlogic.bin.xz`: xz'd columnar table, magic `TLXL`, version 1 or 2.

The CSV header is `M,N,batch,K,solutionIdx` with an optional sixth column `speed`. Every reader returns
the rows as the inline table would hold them (`[[k0, k1, k2, k3], [solution, speed]]`) so the logic reader
checks them the same way. Any problem is one LogicError naming the logic file and the side file.
"""

from __future__ import annotations

import csv
import io
import lzma
import math
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from tensile_lite.errors import LogicError, Where

# The suffixes, in the order they are looked for; two present at once is ambiguous and refused.
SUFFIXES = (".csv.gz", ".exactlogic.csv.xz", ".exactlogic.bin.xz")
_HEADER = ["M", "N", "batch", "K", "solutionIdx"]
_MAGIC = b"TLXL"
_KEYS = 4
# A side table larger than this once decompressed is refused rather than read into memory.
MAX_TABLE_BYTES = 1 << 30

# Speed text of the CSV forms: a decimal integer, a decimal with a point (optional exponent), or a
# single-quoted string (a YAML spelling such as '.inf').
_SPEED = re.compile(r"(-?(?:0|[1-9][0-9]*))|(-?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?)|'([^',]*)'")
_YAML_SPECIAL = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}

Rows = list[list[list[Any]]]


@attrs.frozen(slots=True)
class SideTable:
    path: Path
    rows: Rows = attrs.field(repr=False)


class _Bad(Exception):
    """What is wrong inside a side file (turned into a LogicError by `side_table`)."""


def side_files(logic_path: Path) -> list[Path]:
    """The side files present next to `logic_path`."""
    return [p for p in (logic_path.with_name(logic_path.name + s) for s in SUFFIXES) if p.is_file()]


def _speed_value(text: str) -> float:
    match = _SPEED.fullmatch(text)
    if match is None:
        raise _Bad(f"speed {text!r} is not a number or a quoted YAML float")
    if match.group(3) is None:
        return float(text)
    word = match.group(3)
    if word.lower() in _YAML_SPECIAL:
        return _YAML_SPECIAL[word.lower()]
    try:
        return float(word)
    except ValueError:
        raise _Bad(f"speed {text!r} is not a number") from None


def _bounded(decompressor: Any, data: bytes) -> bytes:
    out = decompressor.decompress(data, MAX_TABLE_BYTES + 1)
    if len(out) > MAX_TABLE_BYTES:
        raise _Bad(f"decompresses to more than {MAX_TABLE_BYTES >> 20} MiB")
    return bytes(out)


def _unpack(decompressor: Any, errors: type[Exception], kind: str, data: bytes) -> bytes:
    try:
        out = _bounded(decompressor, data)
    except errors as exc:
        raise _Bad(f"not {kind} stream ({exc})") from None
    if not decompressor.eof:
        raise _Bad(f"truncated {kind.split()[-1]} stream")
    return out


def _gunzip(data: bytes) -> bytes:
    return _unpack(zlib.decompressobj(wbits=31), zlib.error, "a gzip", data)  # wbits 31: gzip container


def _unxz(data: bytes) -> bytes:
    return _unpack(lzma.LZMADecompressor(format=lzma.FORMAT_XZ), lzma.LZMAError, "an xz", data)


def _csv_rows(text: bytes) -> Rows:
    try:
        lines = list(csv.reader(io.StringIO(text.decode("ascii"), newline="")))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise _Bad(f"not an ASCII CSV table ({exc})") from None
    if not lines or lines[0] not in (_HEADER, [*_HEADER, "speed"]):
        raise _Bad(f"header {lines[0] if lines else None!r} is not {','.join(_HEADER)}[,speed]")
    width = len(lines[0])
    rows: Rows = []
    for n, line in enumerate(lines[1:], start=2):
        if len(line) != width:
            raise _Bad(f"line {n} has {len(line)} fields, the header {width}")
        try:
            ints = [int(v) for v in line[:5]]
        except ValueError:
            raise _Bad(f"line {n}: {','.join(line)!r} does not start with five integers") from None
        speed = _speed_value(line[5]) if width == 6 else 0.0
        rows.append([ints[:4], [ints[4], speed]])
    return rows


def _varint(payload: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(payload):
            raise _Bad("truncated varint")
        byte = payload[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if byte < 0x80:
            return value, pos
        shift += 7


def _unzigzag(u: int) -> int:
    return -((u + 1) >> 1) if u & 1 else u >> 1


def _columns(payload: bytes, pos: int, n: int) -> tuple[list[list[int]], list[int], int]:
    """The delta-coded key columns and the solution column of a TLXL table."""
    keys = [[0] * n for _ in range(_KEYS)]
    for col in keys:
        value = 0
        for i in range(n):
            delta, pos = _varint(payload, pos)
            value += _unzigzag(delta)
            col[i] = value
    solutions = [0] * n
    for i in range(n):
        solutions[i], pos = _varint(payload, pos)
    return keys, solutions, pos


def _tlxl_speeds(payload: bytes, pos: int, n: int) -> list[float]:
    """Version 2's speed columns: a type byte per row (0 float, 1 int, 2 str, 3 null), then the floats
    (binary64, little endian), the ints (zigzag varints) and the strs (length-prefixed UTF-8) in order."""
    tags = payload[pos:pos + n]
    if len(tags) != n or any(t > 3 for t in tags):
        raise _Bad("bad or truncated speed type column")
    pos += n
    n_floats = tags.count(0)
    if pos + 8 * n_floats > len(payload):
        raise _Bad("truncated float speeds")
    floats = struct.unpack_from(f"<{n_floats}d", payload, pos)
    pos += 8 * n_floats
    ints = []
    for _ in range(tags.count(1)):
        u, pos = _varint(payload, pos)
        ints.append(float(_unzigzag(u)))
    strs = []
    for _ in range(tags.count(2)):
        size, pos = _varint(payload, pos)
        if pos + size > len(payload):
            raise _Bad("truncated str speeds")
        try:
            strs.append(_speed_value("'" + payload[pos:pos + size].decode("utf-8") + "'"))
        except UnicodeDecodeError:
            raise _Bad("a str speed is not UTF-8") from None
        pos += size
    if pos != len(payload):
        raise _Bad("trailing bytes after the speeds")
    sources = (iter(floats), iter(ints), iter(strs), iter([0.0] * tags.count(3)))
    return [next(sources[t]) for t in tags]


def _tlxl_rows(payload: bytes) -> Rows:
    if payload[:4] != _MAGIC:
        raise _Bad(f"magic {payload[:4]!r} is not {_MAGIC!r}")
    version = payload[4] if len(payload) > 4 else None
    if version not in (1, 2):
        raise _Bad(f"TLXL version {version} (known: 1, 2)")
    n, pos = _varint(payload, 5)
    if version == 1:
        keys, solutions, pos = _columns(payload, pos, n)
        if pos != len(payload):
            raise _Bad("trailing bytes after the table")
        speeds = [0.0] * n
    else:
        size, pos = _varint(payload, pos)
        keys, solutions, end = _columns(payload, pos, n)
        if end != pos + size:
            raise _Bad(f"the key and solution columns take {end - pos} bytes, the header says {size}")
        speeds = _tlxl_speeds(payload, end, n)
    return [[[keys[0][i], keys[1][i], keys[2][i], keys[3][i]], [solutions[i], speeds[i]]] for i in range(n)]


_READERS: dict[str, Callable[[bytes], Rows]] = {
    ".csv.gz": lambda data: _csv_rows(_gunzip(data)),
    ".exactlogic.csv.xz": lambda data: _csv_rows(_unxz(data)),
    ".exactlogic.bin.xz": lambda data: _tlxl_rows(_unxz(data)),
}


def side_table(logic_path: Path, inline: Any, library_type: Any, where: Where) -> SideTable | None:
    """The side file next to `logic_path` and its ExactLogic rows, or None when there is none.

    `inline` is the file's own ExactLogic element: a side file is only read when it is null, as the
    two together would be ambiguous; and only for GridBased tables, the one kind 7.x moves out."""
    found = side_files(logic_path)
    if not found:
        return None
    at = Where(file=where.file, parameter="ExactLogic")
    if len(found) > 1:
        raise LogicError(f"has {len(found)} ExactLogic side files ({', '.join(p.name for p in found)}); "
                         "keep one", at)
    side = found[0]
    if inline is not None:
        raise LogicError(f"its ExactLogic table is inline and side file {side} also exists; remove one", at)
    if library_type != "GridBased":
        raise LogicError(f"side file {side} holds an ExactLogic table, but the library type is "
                         f"{library_type!r} (only GridBased tables are kept beside the file)", at)
    suffix = next(s for s in SUFFIXES if side.name.endswith(s))
    try:
        return SideTable(side, _READERS[suffix](side.read_bytes()))
    except OSError as exc:
        raise LogicError(f"cannot read ExactLogic side file {side}: {exc.strerror or exc}", at) from None
    except _Bad as exc:
        raise LogicError(f"ExactLogic side file {side} is damaged: {exc}", at) from None
