"""Predicate nodes of the `.dat` tree, and the orders the runtime relies on.

A node is a plain dict `{type[, index][, value]}` in that key order, ready to encode. Row order matters to
the runtime (the first matching row wins), so rows are sorted the way upstream sorts them: `TruePred` last,
otherwise by (type, index, value); hardware rows put the higher CU count first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

Node = dict[str, Any]


def pred(type_: str, value: Any = None, index: int | None = None) -> Node:
    node: Node = {"type": type_}
    if index is not None:
        node["index"] = index
    if value is not None:
        node["value"] = value
    return node


TRUE: Node = {"type": "TruePred"}


def true_pred() -> Node:
    return dict(TRUE)


def conjunction(preds: Sequence[Node]) -> Node:
    """`And` of the list, collapsed as upstream does: none -> TruePred, one -> itself."""
    if not preds:
        return true_pred()
    if len(preds) == 1:
        return preds[0]
    return pred("And", list(preds))


def hardware(arch: str, cu_count: int | None) -> Node:
    """The AMDGPU predicate of an architecture (and CU count); `fallback` files match any device."""
    if arch == "fallback":
        return true_pred()
    processor = pred("Processor", arch)
    if cu_count is None:
        return pred("AMDGPU", processor)
    return pred("AMDGPU", pred("And", [processor, pred("CUCount", cu_count)]))


def _value_key(value: Any) -> Any:
    """A total order over node values (mixed types compare by type name first)."""
    if isinstance(value, Mapping):
        return ("map", tuple((str(k), _value_key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_value_key(v) for v in value))
    if isinstance(value, bool):
        return ("bool", int(value))
    if isinstance(value, (int, float)):
        return ("num", value)
    if value is None:
        return ("none", 0)
    return ("str", str(value))


def sort_key(node: Node) -> tuple[Any, ...]:
    """Upstream's row order: everything before TruePred, then by type, index and value."""
    if node["type"] == "TruePred":
        return (1,)
    index = node.get("index")
    return (0, node["type"], -1 if index is None else 0, index or 0, _value_key(node.get("value")))


def hardware_sort_key(node: Node) -> tuple[Any, ...]:
    """Hardware rows: specific devices before `TruePred`, higher CU count first, then by processor."""
    if node["type"] == "TruePred":
        return (1,)
    inner = node["value"]
    parts = inner["value"] if inner["type"] == "And" else [inner]
    cu = next((p["value"] for p in parts if p["type"] == "CUCount"), 0)
    processor = next((p["value"] for p in parts if p["type"] == "Processor"), "")
    return (0, -cu, processor)


def types_used(node: Any, found: dict[str, int] | None = None) -> dict[str, int]:
    """Every predicate `type` in a tree with its count (a summary for inspect-dat and tests)."""
    found = {} if found is None else found
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("predicate", "problemPredicate", "hardwarePredicate"):
                _count_predicates(value, found)
            else:
                types_used(value, found)
    elif isinstance(node, list):
        for item in node:
            types_used(item, found)
    return found


def _count_predicates(node: Any, found: dict[str, int]) -> None:
    if not isinstance(node, Mapping) or "type" not in node:
        return
    found[node["type"]] = found.get(node["type"], 0) + 1
    value = node.get("value")
    children: Iterable[Any] = value if isinstance(value, list) else [value]
    for child in children:
        _count_predicates(child, found)
