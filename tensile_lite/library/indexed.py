"""The indexed library layout (`format_version` 2, rocm-libraries develop's `msgpack-indexed`).

A format-1 library document is `{solutions: [...], library: tree}`. The indexed form keeps the tree as it is
and replaces the solution list by a table and a blob, so the runtime can parse one solution when it is first
used instead of all of them at load:

    {format_version: 2, [version,] solutions_index: [index, offset, length, ...], solutions_blob: bin,
     library: tree}

Each solution is packed on its own; the blob is those packings one after the other, in increasing index
order, and the table lists (index, offset, length) in the same order, so the spans tile the blob. The key
order is fixed, so equal input gives equal bytes. Mapping files (`{first index: name}`) have no solution
list and are never written this way.

What the runtime refuses when loading (its checks are the ones `check_indexed` makes): a version other than
1 or 2, a table that is not whole triples of non-negative integers, an index wider than a 32-bit int, an
index listed twice, a span past the end of the blob, no blob, and an index named by the tree but absent
from the table; a span whose bytes decode to a solution of another index is refused on first use.
Sources: docs/rocm7_library_types.md (msgpack-indexed).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import msgpack

from tensile_lite.errors import BuildError, DatError

FORMAT_VERSION = 2
INT_MAX = 2**31 - 1  # the runtime keeps solution indices in an `int`
_TOP_KEYS = ("version", "solutions", "library")  # what a format-1 document may hold


def is_indexed(doc: object) -> bool:
    """A decoded document that says which layout it has (absent `format_version` is format 1)."""
    return isinstance(doc, Mapping) and "format_version" in doc


def to_indexed(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The format-2 document of a format-1 library document. The caller's document is not changed."""
    if not isinstance(doc, Mapping) or not isinstance(doc.get("solutions"), list) or "library" not in doc:
        raise BuildError("only a library document ({solutions, library}) has an indexed form; a mapping file "
                         "is always written as plain msgpack")
    extra = sorted(str(k) for k in doc if k not in _TOP_KEYS)
    if extra:
        raise BuildError(f"a library document with keys {extra} has no indexed form")
    solutions = sorted(doc["solutions"], key=_index_of)
    table: list[int] = []
    blob = bytearray()
    for entry in solutions:
        packed = msgpack.packb(entry, use_bin_type=True)
        table += [_index_of(entry), len(blob), len(packed)]
        blob += packed
    out: dict[str, Any] = {"format_version": FORMAT_VERSION}
    if "version" in doc:
        out["version"] = doc["version"]
    out.update(solutions_index=table, solutions_blob=bytes(blob), library=doc["library"])
    return out


def _index_of(entry: Any) -> int:
    index = entry.get("index") if isinstance(entry, Mapping) else None
    if not isinstance(index, int) or isinstance(index, bool):
        raise BuildError(f"a solution without an integer index cannot be indexed: {str(entry)[:80]}")
    return index


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def tree_indices(node: Any) -> Iterator[int]:
    """Every solution index the library tree names: `index` of table rows and Single nodes, and the plain
    index lists of Prediction pools."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            if _is_int(item.get("index")) and item.get("type") in (None, "Single"):
                yield item["index"]
            if item.get("type") == "Prediction" and isinstance(item.get("table"), list):
                yield from (i for i in item["table"] if _is_int(i))
            stack.extend(v for k, v in item.items() if k != "predicate")
        elif isinstance(item, list):
            stack.extend(item)


def check_indexed(doc: Mapping[str, Any]) -> list[tuple[int, int, int]]:
    """The (index, offset, length) rows of a format-2 document, or the DatError the runtime's loader would
    refuse it with."""
    version = doc.get("format_version")
    if version != FORMAT_VERSION:
        raise DatError(f"format_version {version!r} is not one the runtime reads (1 or absent: a solution list; "
                       f"{FORMAT_VERSION}: indexed)")
    blob = doc.get("solutions_blob")
    if not isinstance(blob, bytes):
        raise DatError("indexed library without a solutions_blob (binary)")
    if "library" not in doc:
        raise DatError("indexed library without a library tree")
    table = doc.get("solutions_index")
    if not isinstance(table, list) or not all(_is_int(v) for v in table):
        raise DatError("solutions_index is not a list of integers")
    if len(table) % 3:
        raise DatError(f"solutions_index has {len(table)} entries, not whole (index, offset, length) triples")
    rows = [(table[i], table[i + 1], table[i + 2]) for i in range(0, len(table), 3)]
    seen: set[int] = set()
    for n, (index, offset, length) in enumerate(rows):
        where = f"solutions_index row {n} (index {index})"
        if index < 0 or offset < 0 or length < 0:
            raise DatError(f"{where}: negative field ({index}, {offset}, {length})")
        if index > INT_MAX:
            raise DatError(f"{where}: index does not fit the runtime's int")
        if index in seen:
            raise DatError(f"{where}: index listed twice")
        seen.add(index)
        if offset > len(blob) or length > len(blob) - offset:  # no sum that could wrap in C
            raise DatError(f"{where}: span {offset}+{length} runs past the {len(blob)}-byte blob")
    missing = sorted(set(tree_indices(doc["library"])) - seen)
    if missing:
        raise DatError(f"the library tree names solution(s) {missing[:5]} that solutions_index does not list")
    return rows


def from_indexed(doc: Mapping[str, Any]) -> dict[str, Any]:
    """The format-1 document of a checked format-2 document: solutions in table order, each slice decoded
    and checked to be the solution its row names."""
    rows = check_indexed(doc)
    blob = doc["solutions_blob"]
    solutions = []
    for index, offset, length in rows:
        try:
            entry = msgpack.unpackb(blob[offset:offset + length], raw=False, strict_map_key=False)
        except (ValueError, msgpack.UnpackException) as exc:
            raise DatError(f"solution {index}: its blob slice is not one msgpack object: {exc}") from None
        if not isinstance(entry, Mapping) or entry.get("index") != index:
            got = entry.get("index") if isinstance(entry, Mapping) else type(entry).__name__
            raise DatError(f"solution {index}: its blob slice holds solution {got!r}")
        solutions.append(entry)
    out: dict[str, Any] = {}
    if "version" in doc:
        out["version"] = doc["version"]
    out.update(solutions=solutions, library=doc["library"])
    return out
