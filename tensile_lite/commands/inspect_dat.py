"""`tensile-lite inspect-dat`: decode a library file of any format; print the tree or a summary."""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from tensile_lite.errors import DatError, Where
from tensile_lite.library.formats import INDEXED_FORMATS, decode, decode_raw, detect_format
from tensile_lite.library.layout import is_mapping_document, read_mapping
from tensile_lite.library.predicates import types_used
from tensile_lite.verify.integrity import DAMAGE, check_document

NAME = "inspect-dat"
HELP = "decode a library .dat or mapping file (msgpack, indexed, zstd, zlib or yaml) and summarise it"
DESCRIPTION = (
    "Read a TensileLibrary .dat file in any library format (plain msgpack, the indexed layout of format_version "
    "2, a zstd frame, a .dat.zlib stream or YAML) and print a summary: whether it is a master (lazy, or non-lazy with its solutions inline) or a placeholder library, its solutions, the "
    "placeholder libraries it refers to, the library node types and the predicate types it uses. A 7.x "
    "mapping file (TensileLiteLibrary_lazy[_<gfx>]_Mapping.dat[.zlib]) is listed as the solution-index "
    "ranges of each lazy library. An indexed file is checked as the runtime loads it and shown as its "
    "format-1 content. With --json, print the whole decoded tree as JSON instead."
)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", metavar="FILE", help="a .dat, .dat.zlib or .yaml library file")
    p.add_argument("--json", action="store_true", help="print the decoded tree as JSON")


def _nodes(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every library node (not predicates, not solutions) of a tree."""
    if not isinstance(node, Mapping):
        return
    yield node
    t = node.get("type")
    if t in ("Hardware", "Problem"):
        for row in node.get("rows", ()):
            yield from _nodes(row.get("library"))
    elif t == "ProblemMap":
        for child in node.get("map", {}).values():
            yield from _nodes(child)
    elif t == "DecisionTree":
        for tree in node.get("trees", ()):
            yield from _nodes(tree.get("value"))
        yield from _nodes(node.get("nullValue"))


def _kind(root: Any, placeholders: list[str], solutions: list[Any]) -> str:
    """A lazy master names placeholders and has no solutions; a master built without lazy loading has
    the same Hardware root but holds every solution and no placeholder; anything else is a placeholder."""
    if placeholders and not solutions:
        return "master"
    if isinstance(root, Mapping) and root.get("type") == "Hardware" and solutions and not placeholders:
        return "master (non-lazy: every solution inline)"
    return "placeholder"


def summarise(doc: Any) -> dict[str, Any]:
    if not isinstance(doc, Mapping) or "library" not in doc or "solutions" not in doc:
        raise DatError("not a library document (needs 'solutions' and 'library')")
    solutions = doc["solutions"] or []
    nodes = list(_nodes(doc["library"]))
    node_types = Counter(str(n.get("type")) for n in nodes)
    placeholders = sorted(str(n["value"]) for n in nodes if n.get("type") == "Placeholder")
    distances = Counter(str(n.get("distance")) for n in nodes if n.get("type") == "Matching")
    table_rows = sum(len(n.get("table", ())) for n in nodes if n.get("type") in ("Matching", "FreeSize", "Prediction"))
    indices = [i for s in solutions if isinstance(s, Mapping) and isinstance(i := s.get("index"), int)]
    return {
        "kind": _kind(doc["library"], placeholders, solutions),
        "solutions": len(solutions),
        "index_range": [min(indices), max(indices)] if indices else None,
        "kernels": len({s.get("kernelName") for s in solutions if isinstance(s, Mapping)}),
        "placeholders": placeholders,
        "library_nodes": dict(sorted(node_types.items())),
        "matching_distances": dict(sorted(distances.items())),
        "table_rows": table_rows,
        "predicate_types": dict(sorted(types_used(doc).items())),
    }


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatError(f"cannot read: {exc.strerror}", Where(file=str(path))) from None
    try:
        doc = decode(data, path.name)
    except DAMAGE as exc:  # a decoder tripping over damage it does not report itself
        raise DatError(f"cannot be decoded ({type(exc).__name__}: {exc})", Where(file=str(path))) from None
    except DatError as exc:  # the decoder knows only the file's name: name the path
        raise DatError(exc.message, Where(file=str(path))) from None
    if is_mapping_document(doc):
        return _print_mapping(path, data, doc, args.json)
    check_document(doc, path)  # damage is named here, before any reader can trip over it
    if args.json:
        json.dump(doc, sys.stdout, indent=1, default=lambda o: o.hex() if isinstance(o, bytes) else str(o))
        print()
        return 0
    try:
        summary = summarise(doc)
    except DatError as exc:
        raise exc.at(file=str(path)) from None
    except DAMAGE as exc:
        raise DatError(f"damaged library file ({type(exc).__name__}: {exc})", Where(file=str(path))) from None
    fmt = detect_format(path, data)
    print(f"{path}: {fmt}, {len(data):,} bytes, {summary['kind']} library")
    rng = summary["index_range"]
    print(f"  solutions: {summary['solutions']}" + (f" (indices {rng[0]}..{rng[1]}), "
                                                     f"{summary['kernels']} distinct kernels" if rng else ""))
    if fmt in INDEXED_FORMATS:
        blob = decode_raw(data, path.name)["solutions_blob"]
        print(f"  format_version 2: {summary['solutions']} solutions in a {len(blob):,}-byte blob, "
              "each parsed on first use")
    if summary["placeholders"]:
        print(f"  placeholders ({len(summary['placeholders'])}):")
        for name in summary["placeholders"]:
            print(f"    {name}")
    print("  library nodes: " + ", ".join(f"{k} {v}" for k, v in summary["library_nodes"].items()))
    if summary["matching_distances"]:
        print("  matching distances: " + ", ".join(f"{k} {v}" for k, v in summary["matching_distances"].items()))
    if summary["table_rows"]:
        print(f"  table rows: {summary['table_rows']}")
    print("  predicate types: " + ", ".join(f"{k} {v}" for k, v in summary["predicate_types"].items()))
    return 0


def _print_mapping(path: Path, data: bytes, doc: Any, as_json: bool) -> int:
    try:
        mapping = read_mapping(doc)
    except DatError as exc:
        raise exc.at(file=str(path)) from None
    if as_json:
        json.dump({str(k): v for k, v in mapping.items()}, sys.stdout, indent=1)
        print()
        return 0
    print(f"{path}: {detect_format(path, data)}, {len(data):,} bytes, mapping of {len(mapping)} lazy libraries")
    firsts = list(mapping)
    for i, (first, name) in enumerate(mapping.items()):
        # each library's range ends where the next begins (the runtime's lookup); the last is open
        span = f"{first}..{firsts[i + 1] - 1}" if i + 1 < len(firsts) else f"{first}.."
        print(f"  {span:>13}  {name}")
    return 0
