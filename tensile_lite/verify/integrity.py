"""Validate what a library file holds before anything reads it: a damaged `.dat`, `.co` or `.hsaco` is an
error naming the file and what is wrong, never a traceback, a pass or a skip.

`check_document` checks the shape of a `.dat` tree (library nodes, tables, solution entries) as the runtime
needs it; `check_code_object` opens a code object and checks the kernels it must hold are complete. Both
raise DatError with the file and the place inside it (`library.rows[0].library...`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tensile_lite.errors import Where
from tensile_lite.library.formats import DatError

# The library node types of the runtime's libraries (lazy or not), and what each must hold.
_NODE_TYPES = frozenset({"Hardware", "Problem", "ProblemMap", "Matching", "FreeSize", "Placeholder",
                         "DecisionTree", "Single", "Prediction"})
# Fields every solution entry of a placeholder library has, with their types.
_ENTRY_FIELDS: tuple[tuple[str, type | tuple[type, ...]], ...] = (
    ("index", int), ("kernelName", str), ("name", str), ("problemType", Mapping), ("sizeMapping", Mapping),
    ("problemPredicate", Mapping), ("hardwarePredicate", Mapping),
)
_SCALARS = (int, float, str, bool, type(None))
# Exceptions a reader of a damaged file may hit; any of them is the file's fault, not a bug.
DAMAGE = (TypeError, ValueError, KeyError, IndexError, AttributeError, OverflowError, RecursionError,
          UnicodeDecodeError, EOFError)


class _Damage(Exception):
    def __init__(self, where: str, what: str) -> None:
        self.where, self.what = where, what
        super().__init__(f"{where}: {what}")


def _need(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise _Damage(where, what)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_predicate(pred: Any, where: str) -> None:
    _need(isinstance(pred, Mapping) and isinstance(pred.get("type"), str), where, "a predicate without a type")
    value = pred.get("value")
    if isinstance(value, list) and all(isinstance(v, Mapping) for v in value) and value:
        for i, sub in enumerate(value):  # And / Or: nested predicates
            _check_predicate(sub, f"{where}.value[{i}]")


def _check_rows(node: Mapping[str, Any], where: str, depth: int) -> None:
    rows = node.get("rows")
    if not isinstance(rows, list):
        raise _Damage(where, "rows is not a list")
    for i, row in enumerate(rows):
        here = f"{where}.rows[{i}]"
        _need(isinstance(row, Mapping), here, "a row is not a map")
        _check_predicate(row.get("predicate"), f"{here}.predicate")
        _check_node(row.get("library"), f"{here}.library", depth + 1)


def _check_table(node: Mapping[str, Any], where: str, keyed: bool) -> None:
    table = node.get("table")
    if not isinstance(table, list):
        raise _Damage(where, "table is not a list")
    for i, entry in enumerate(table):
        here = f"{where}.table[{i}]"
        _need(isinstance(entry, Mapping) and _is_int(entry.get("index")), here, "an entry without an integer index")
        if keyed:
            key = entry.get("key")
            _need(isinstance(key, list) and all(_is_int(k) for k in key), here, "key is not a list of integers")


def _check_node(node: Any, where: str, depth: int = 0) -> None:
    _need(depth < 64, where, "library nodes nested implausibly deep")
    _need(isinstance(node, Mapping), where, "a library node is not a map")
    kind = node.get("type")
    _need(kind in _NODE_TYPES, where, f"unknown library node type {kind!r}")
    if kind in ("Hardware", "Problem"):
        _check_rows(node, where, depth)
    elif kind == "ProblemMap":
        children = node.get("map")
        _need(isinstance(children, Mapping), where, "map is not a map")
        for key, child in children.items():
            _check_node(child, f"{where}.map[{key!r}]", depth + 1)
    elif kind == "Placeholder":
        _need(isinstance(node.get("value"), str) and node["value"], where, "a placeholder without a library name")
    elif kind == "Matching":
        _need(isinstance(node.get("properties"), list), where, "properties is not a list")
        _need(isinstance(node.get("distance"), str), where, "distance is not a string")
        _check_table(node, where, keyed=True)
    elif kind == "FreeSize":
        _check_table(node, where, keyed=False)
    elif kind == "Prediction":  # 7.x: the runtime refuses an empty pool and reads bare indices
        table = node.get("table")
        _need(isinstance(table, list) and bool(table) and all(_is_int(i) for i in table), where,
              "a Prediction node needs a non-empty table of integer solution indices")
    elif kind == "Single":
        _need(_is_int(node.get("index")), where, "a Single node without an integer index")
    elif kind == "DecisionTree":
        trees = node.get("trees")
        _need(isinstance(trees, list), where, "trees is not a list")
        for i, tree in enumerate(trees):
            _need(isinstance(tree, Mapping), f"{where}.trees[{i}]", "a tree is not a map")
            _check_node(tree.get("value"), f"{where}.trees[{i}].value", depth + 1)
        if node.get("nullValue") is not None:
            _check_node(node["nullValue"], f"{where}.nullValue", depth + 1)


def _check_values(value: Any, where: str, depth: int = 0) -> None:
    """Only maps, lists and plain scalars, to a sane depth (what msgpack of a .dat can hold)."""
    _need(depth < 64, where, "values nested implausibly deep")
    if isinstance(value, Mapping):
        for k, v in value.items():
            _need(isinstance(k, (str, int)), where, f"a map key of type {type(k).__name__}")
            _check_values(v, f"{where}.{k}", depth + 1)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _check_values(v, f"{where}[{i}]", depth + 1)
    else:
        _need(isinstance(value, _SCALARS), where, f"a value of type {type(value).__name__}")


def _check_entry(entry: Any, where: str) -> None:
    _need(isinstance(entry, Mapping), where, "a solution entry is not a map")
    for field, kind in _ENTRY_FIELDS:
        value = entry.get(field)
        ok = _is_int(value) if kind is int else isinstance(value, kind)
        _need(ok, f"{where}.{field}", "missing" if value is None else f"of type {type(value).__name__}, "
                                                                       f"not {getattr(kind, '__name__', kind)}")
    _need(bool(entry["kernelName"]), f"{where}.kernelName", "empty")
    for field in ("sizeMapping", "problemType", "problemPredicate", "hardwarePredicate"):
        _check_values(entry[field], f"{where}.{field}")


def _check_solutions(solutions: Any) -> None:
    _need(isinstance(solutions, list), "solutions", "not a list")
    seen: set[int] = set()
    for n, entry in enumerate(solutions):
        _check_entry(entry, f"solutions[{n}]")
        _need(entry["index"] not in seen, f"solutions[{n}].index", f"index {entry['index']} appears twice")
        seen.add(entry["index"])


def _named_indices(node: Mapping[str, Any]) -> list[int]:
    """The solution indices one selection node names directly."""
    kind = node.get("type")
    if kind == "Prediction":
        return list(node["table"])
    if kind in ("Matching", "FreeSize"):
        return [e["index"] for e in node["table"]]
    return [node["index"]] if kind == "Single" else []


def _check_indices(doc: Mapping[str, Any]) -> None:
    """Each index a selection node names is a solution of the same file: the runtime resolves them in the
    file's own solutions (a placeholder library, or a master built without lazy loading; the Prediction
    node's loader refuses any other on load)."""
    known = {e["index"] for e in doc["solutions"]}
    stack: list[tuple[Any, str]] = [(doc["library"], "library")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, Mapping):
            if node.get("type") in _NODE_TYPES and (missing := sorted(set(_named_indices(node)) - known)):
                raise _Damage(where, f"a {node['type']} node names solution(s) {missing[:5]} not in the file")
            stack.extend((v, f"{where}.{k}") for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((v, f"{where}[{i}]") for i, v in enumerate(node))


def check_document(doc: Any, path: str | Path) -> None:
    """Raise a DatError naming `path` and the damaged place unless `doc` is a well-formed library tree."""
    try:
        _need(isinstance(doc, Mapping), "root", f"not a map but {type(doc).__name__}")
        _need("library" in doc and "solutions" in doc, "root", "needs 'solutions' and 'library'")
        _check_solutions(doc["solutions"])
        _check_node(doc["library"], "library")
        _check_indices(doc)
    except _Damage as exc:
        raise DatError(f"damaged library file: {exc.where}: {exc.what}", Where(file=str(path))) from None
    except DAMAGE as exc:
        raise DatError(f"damaged library file ({type(exc).__name__}: {exc})", Where(file=str(path))) from None


def check_code_object(path: Path, kernels: Iterable[str] = (), arch: str | None = None) -> None:
    """Open `path` and check it is an AMDGPU code object for `arch` holding each of `kernels` complete;
    a DatError naming the file and the problem otherwise (missing, truncated, garbage, wrong target)."""
    from tensile_lite.codeobj.elf import missing_kernels, read_code_object
    from tensile_lite.errors import TensileLiteError

    where = Where(file=str(path))
    if not path.is_file():
        raise DatError("missing (the library's .dat files refer to it)", where)
    try:
        info = read_code_object(path)
    except TensileLiteError as exc:
        raise DatError(f"not a readable code object: {exc.message}", where) from None
    except DAMAGE as exc:  # pyelftools on a truncated or garbled file
        raise DatError(f"not a readable code object (truncated or damaged: {type(exc).__name__}: {exc})",
                       where) from None
    if arch is not None and info.target and not info.target.split(":")[0].endswith(f"--{arch}"):
        raise DatError(f"built for {info.target}, not {arch}", where)
    if not info.kernels:
        raise DatError("holds no kernels (truncated or damaged)", where)
    problems = missing_kernels(info, kernels)
    if problems:
        shown = "; ".join(f"{n}: {why}" for n, why in sorted(problems.items())[:3])
        raise DatError(f"{len(problems)} kernel(s) the .dat names are not complete in it: {shown}", where)
