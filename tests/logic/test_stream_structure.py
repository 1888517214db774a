"""The streaming reader's contract beyond scalars: what it refuses and where, how a sequence is handed over,
which error wins, and that memory does not grow with the number of items handed over."""

from __future__ import annotations

import re
import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import tensile_lite.sample
from tensile_lite.errors import LogicError
from tensile_lite.logic.stream import Streamed, load
from tensile_lite.logic.yamlload import load_yaml

SAMPLE = next(tensile_lite.sample.path().rglob("*HHS_BH.yaml"))


@pytest.mark.parametrize(("text", "position", "fragment"), [
    ("- a\n- &base b\n- *base\n", "line 2, column 3", "anchors (&base)"),
    ("- a\n- [*nowhere]\n", "line 2, column 4", "aliases (*nowhere)"),
    ("x: 1\ny:\n  <<: {a: 1}\n  b: 2\n", "line 3, column 3", "merge keys (<<)"),
    ("- !!set {a, b}\n", "line 1, column 3", "tag:yaml.org,2002:set"),
    ("- !!omap [a: 1]\n", "line 1, column 3", "tag:yaml.org,2002:omap"),
    ("- !!python/tuple [1, 2]\n", "line 1, column 3", "python/tuple"),
    ("a:\n  b: !custom 3\n", "line 2, column 6", "'!custom'"),
    ("a: 1\n---\nb: 2\n", "line 2, column 1", "single document"),
    ("a:\n  ? [1, 2]\n  : 3\n", "line 2, column 5", "unhashable map key (list)"),
    ("- !!int twelve\n", "line 1, column 3", "cannot read 'twelve' as tag:yaml.org,2002:int"),
    ("when: 2002-02-30\n", "line 1, column 7", "timestamp"),
])
def test_refused_with_line_and_column(text, position, fragment):
    with pytest.raises(LogicError) as info:
        load(text, "f.yaml")
    line = info.value.one_line()
    assert line.startswith("f.yaml: ") and position in line and fragment in line, line


@given(st.recursive(st.integers() | st.text(max_size=5), lambda inner: st.lists(inner, max_size=3) |
                    st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=8)
       .filter(lambda d: isinstance(d, (list, dict))))
@settings(max_examples=30, deadline=None)
def test_aliases_safe_dump_writes_are_refused_at_the_anchor(data):
    text = yaml.safe_dump([data, data])  # the same container twice: written once, then referred to
    assert text.startswith("- &id001")
    with pytest.raises(LogicError, match=re.escape("line 1, column 3: anchors (&id001)")):
        load(text)


def test_empty_stream_is_none_like_yaml_load():
    assert load("") is None and load("# only a comment\n") is None and load(b"") is None


def _collecting(into: list, heads: list | None = None, result="done"):
    def consume(head, items):
        if heads is not None:
            heads.append(list(head) if isinstance(head, list) else dict(head))
        for item in items:
            into.append(item)
        return result
    return consume


def test_sequence_in_a_root_list_is_handed_over_with_the_head():
    got, heads = [], []
    root = load("- a\n- {k: 1}\n- [1, {x: yes}, [2]]\n- end\n", streamed=Streamed(_collecting(got, heads), index=2))
    assert root == ["a", {"k": 1}, "done", "end"]
    assert heads == [["a", {"k": 1}]]
    assert got == [1, {"x": True}, [2]]


def test_sequence_under_a_root_key_is_handed_over_with_the_keys_so_far():
    got, heads = [], []
    text = "Arch: gfx942\nSolutions:\n- {a: 1}\n- {a: 2}\nLibrary: [x]\nSolutions2: [3]\n"
    root = load(text, streamed=Streamed(_collecting(got, heads), key="Solutions"))
    assert root == {"Arch": "gfx942", "Solutions": "done", "Library": ["x"], "Solutions2": [3]}
    assert heads == [{"Arch": "gfx942"}]
    assert got == [{"a": 1}, {"a": 2}]


def test_no_sequence_at_the_stream_point_is_built_as_usual():
    def never(head, items):
        raise AssertionError("not a sequence: must not be handed over")
    assert load("- a\n- {b: 1}\n- c\n", streamed=Streamed(never, index=1, key="b")) == ["a", {"b": 1}, "c"]
    assert load("Solutions: {a: 1}\n", streamed=Streamed(never, index=0, key="Solutions")) == {"Solutions": {"a": 1}}
    assert load("[1, 2]\n", streamed=Streamed(never, index=5)) == [1, 2]


def test_items_left_unread_are_still_parsed():
    root = load("- [1, [2, 3], {a: b}]\n- after\n", streamed=Streamed(lambda head, items: next(items), index=0))
    assert root == [1, "after"]
    with pytest.raises(LogicError, match="anchors"):  # and still checked
        load("- [1, &a 2]\n- after\n", streamed=Streamed(lambda head, items: next(items), index=0))


def test_items_are_built_one_at_a_time():
    # The consumer gets the first items before the parser reaches the broken third one.
    got = []
    with pytest.raises(yaml.YAMLError):
        load("- - {a: 1}\n  - {b: 2}\n  - [unclosed\n", streamed=Streamed(_collecting(got), index=0))
    assert got == [{"a": 1}, {"b": 2}]


def test_a_syntax_error_further_on_wins_over_the_consumers_error():
    def refuse(head, items):
        next(items)
        raise LogicError("bad solution")
    with pytest.raises(yaml.YAMLError):
        load("- - {a: 1}\n  - {b: 2}\n- x\n- [unclosed\n", streamed=Streamed(refuse, index=0))
    with pytest.raises(LogicError, match="bad solution"):  # no syntax error: the consumer's error stands
        load("- - {a: 1}\n  - {b: 2}\n- x\n", streamed=Streamed(refuse, index=0))


@pytest.mark.parametrize("fraction", [0.1, 0.25, 0.5, 0.61, 0.8, 0.97])
def test_syntax_errors_report_the_position_yaml_load_reports(tmp_path, fraction):
    text = SAMPLE.read_text()
    cut = text[: int(len(text) * fraction)] + "\n  - [unclosed, {a: \n"
    path = tmp_path / "cut.yaml"
    path.write_text(cut)
    with pytest.raises(yaml.MarkedYAMLError) as expected:
        yaml.load(cut, Loader=yaml.CSafeLoader)
    mark = expected.value.problem_mark
    with pytest.raises(LogicError) as info:
        load_yaml(Path(path), Streamed(_collecting([]), index=5, key="Solutions"))
    assert f"line {mark.line + 1}, column {mark.column + 1}: {expected.value.problem}" in info.value.one_line()


def _solutions_file(folder: Path, n: int) -> Path:
    path = folder / f"solutions{n}.yaml"
    # Short scalars repeat from item to item, as in logic files; each item's own value (its name) is long.
    keys = ", ".join(f"Key{k}: {k * 7}" for k in range(150))
    items = "\n".join(f"  - {{Name: sol_{i}_{'x' * 100}, {keys}}}" for i in range(n))
    path.write_text(f"- head\n-\n{items}\n- tail\n")
    return path


def _peak(path: Path, loader) -> int:
    with open(path, "rb") as fh:  # read in chunks by libyaml: the text itself is never held
        tracemalloc.start()
        try:
            loader(fh)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()


def test_peak_memory_does_not_grow_with_the_items_handed_over(tmp_path):
    def count(head, items):
        return sum(1 for _ in items)  # each item dropped as soon as it is counted

    def streaming(fh):
        assert load(fh, streamed=Streamed(count, index=1)) == ["head", 400 if "400" in fh.name else 100, "tail"]

    small, large = _solutions_file(tmp_path, 100), _solutions_file(tmp_path, 400)
    peak_small, peak_large = _peak(small, streaming), _peak(large, streaming)
    peak_whole_small = _peak(small, lambda fh: yaml.load(fh, Loader=yaml.CSafeLoader))
    assert peak_large < 1.1 * peak_small, (peak_small, peak_large)
    assert peak_large < peak_whole_small / 20, (peak_large, peak_whole_small)
