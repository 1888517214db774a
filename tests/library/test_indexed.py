"""The indexed layout (format_version 2): it decodes to exactly the format-1 content, its bytes are
deterministic, and every file the runtime's loader would refuse is refused by ours with the reason."""

from __future__ import annotations

import zlib
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tensile_lite.errors import BuildError, DatError
from tensile_lite.library import decode, encode, file_name
from tensile_lite.library.formats import INDEXED_FORMATS, decode_raw, detect_format
from tensile_lite.library.indexed import INT_MAX, check_indexed, from_indexed, to_indexed, tree_indices
from tests.library.test_formats import trees
from tests.library.test_reference import strict_equal

_fields = st.dictionaries(st.sampled_from(["kernelName", "name", "sizeMapping", "problemType", "debug"]), trees,
                          max_size=4)


@st.composite
def libraries(draw: st.DrawFn) -> dict[str, Any]:
    """A format-1 library document: solutions with unique indices (in any order) and extra fields, and a
    tree whose tables, Single nodes and Prediction pools name some of them."""
    indices = draw(st.lists(st.integers(0, INT_MAX), unique=True, max_size=8))
    solutions = [{"index": i, **draw(_fields)} for i in indices]
    named = draw(st.lists(st.sampled_from(indices), max_size=6)) if indices else []
    library = {"type": "Problem", "rows": [
        {"predicate": {"type": "TruePred"}, "library": {"type": "Matching", "table": [
            {"key": [n, 1], "index": i} for n, i in enumerate(named)]}},
        {"predicate": {"type": "PredictionMatching"}, "library": {"type": "Prediction", "table": named}},
        {"predicate": {"type": "TruePred"}, "library": {"type": "DecisionTree", "trees": [], "nullValue": {
            "type": "Single", "index": named[0]}}} if named else {"predicate": None, "library": None},
    ]}
    return {"solutions": solutions, "library": library}


def _sorted(doc: dict[str, Any]) -> dict[str, Any]:
    return {**doc, "solutions": sorted(doc["solutions"], key=lambda s: s["index"])}


@settings(max_examples=80, deadline=None)
@given(doc=libraries(), fmt=st.sampled_from(INDEXED_FORMATS))
def test_indexed_decodes_to_exactly_the_format_1_content(doc, fmt):
    data = encode(doc, fmt)
    name = file_name("TensileLibrary_x_gfx942", fmt)
    assert strict_equal(decode(data, name), _sorted(doc))
    # the same content as a format-1 file of that container, and the same bytes every time
    plain = "msgpack-zlib" if fmt.endswith("zlib") else "msgpack"
    assert strict_equal(decode(data, name), decode(encode(_sorted(doc), plain), file_name("x", plain)))
    assert encode(doc, fmt) == data
    assert detect_format(name, data) == fmt


@settings(max_examples=80, deadline=None)
@given(doc=libraries())
def test_the_table_is_sorted_and_its_spans_tile_the_blob(doc):
    raw = decode_raw(encode(doc, "msgpack-indexed"))
    rows = check_indexed(raw)
    assert [r[0] for r in rows] == sorted(s["index"] for s in doc["solutions"])
    cursor = 0
    for index, offset, length in rows:  # each solution packed on its own, one after the other
        assert offset == cursor
        solution = next(s for s in doc["solutions"] if s["index"] == index)
        assert raw["solutions_blob"][offset:offset + length] == msgpack.packb(solution, use_bin_type=True)
        cursor += length
    assert cursor == len(raw["solutions_blob"])
    # the tree is stored as it is, byte for byte
    assert msgpack.packb(raw["library"], use_bin_type=True) == msgpack.packb(doc["library"], use_bin_type=True)


def test_key_order_and_containers():
    doc = {"solutions": [{"index": 7, "kernelName": "k7"}, {"index": 2, "kernelName": "k2"}],
           "library": {"type": "Single", "index": 2}}
    plain = encode(doc, "msgpack-indexed")
    assert list(msgpack.unpackb(plain)) == ["format_version", "solutions_index", "solutions_blob", "library"]
    assert zlib.decompress(encode(doc, "msgpack-indexed-zlib")) == plain
    versioned = to_indexed({"version": "4", **doc})
    assert list(versioned) == ["format_version", "version", "solutions_index", "solutions_blob", "library"]
    assert list(from_indexed(versioned)) == ["version", "solutions", "library"]
    assert to_indexed(doc)["solutions_index"] == [2, 0, len(msgpack.packb(doc["solutions"][1])),
                                                  7, len(msgpack.packb(doc["solutions"][1])),
                                                  len(msgpack.packb(doc["solutions"][0]))]
    assert doc["solutions"][0]["index"] == 7  # the caller's document is left as it was


def test_a_master_without_solutions_has_an_empty_table():
    master = {"solutions": [], "library": {"type": "Placeholder", "value": "TensileLibrary_x_gfx942"}}
    raw = to_indexed(master)
    assert (raw["solutions_index"], raw["solutions_blob"]) == ([], b"")
    assert decode(encode(master, "msgpack-indexed")) == master


@pytest.mark.parametrize("doc", [{0: "TensileLibrary_a_gfx942", 5: "TensileLibrary_b_gfx942"},
                                 {"solutions": [{"name": "no index"}], "library": {}},
                                 {"solutions": [], "library": {}, "extra": 1}])
def test_what_has_no_indexed_form_is_refused(doc):
    with pytest.raises(BuildError):
        encode(doc, "msgpack-indexed")


def _file(version: Any = 2, table: list[int] | None = None, blob: bytes | None = b"\x01", tree_index: int = 0,
          **extra: Any) -> bytes:
    """A file as the runtime's own tests write them: a one-leaf tree naming `tree_index`."""
    doc: dict[str, Any] = {"format_version": version, "solutions_index": [0, 0, 1] if table is None else table}
    if blob is not None:
        doc["solutions_blob"] = blob
    doc["library"] = {"type": "Single", "index": tree_index}
    doc.update(extra)
    return msgpack.packb(doc, use_bin_type=True)


def test_a_well_formed_file_passes_the_loader_checks():
    raw = decode_raw(_file())
    assert check_indexed(raw) == [(0, 0, 1)]


HUGE = 1 << 62


@pytest.mark.parametrize("data,reason", [
    (_file(version=99), "format_version 99"),
    (_file(table=[0, 0]), "not whole"),
    (_file(table=[0, 0, 64], blob=b"\x01\x02"), "runs past"),
    (_file(table=[0, HUGE, HUGE]), "runs past"),
    (_file(table=[(1 << 32) + 5, 0, 1], tree_index=5), "does not fit"),
    (_file(table=[0, -8, 1]), "negative"),
    (_file(table=[5, 0, 1, 5, 1, 1], blob=b"\x01\x02", tree_index=5), "listed twice"),
    (_file(blob=None), "without a solutions_blob"),
    (_file(tree_index=7), "does not list"),
    (_file(table=[0, "x", 1]), "not a list of integers"),
])
def test_what_the_runtime_refuses_is_refused_with_the_reason(data, reason):
    with pytest.raises(DatError, match=reason):
        check_indexed(decode_raw(data))
    with pytest.raises(DatError, match=reason):
        decode(data, "TensileLibrary_bad.dat")


def test_a_slice_holding_another_solution_is_refused_on_decode():
    other = msgpack.packb({"index": 9})
    data = _file(table=[4, 0, len(other)], blob=other, tree_index=4)
    check_indexed(decode_raw(data))  # the table itself is sound
    with pytest.raises(DatError, match="holds solution 9"):
        decode(data, "x.dat")


def test_format_version_1_is_the_plain_layout():
    assert decode(msgpack.packb({"format_version": 1, "solutions": [], "library": {}})) == {
        "solutions": [], "library": {}}


def test_tree_indices_skip_predicates():
    tree = {"type": "Problem", "rows": [{"predicate": {"type": "X", "index": 3, "value": 1},
                                         "library": {"type": "FreeSize", "table": [{"index": 4}]}}]}
    assert sorted(tree_indices(tree)) == [4]
