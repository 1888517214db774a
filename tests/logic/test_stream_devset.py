"""Every dev-set file: the streaming reader builds exactly what yaml.load(CSafeLoader) builds, and the model
read while streaming equals the model built from the whole loaded file."""

from __future__ import annotations

import tracemalloc
from typing import Any

import yaml

from tensile_lite.logic import read_logic_file, reader
from tensile_lite.logic.stream import Streamed, load
from tests.logic.identical import first_difference
from tests.shared import dev_logic_files


def _streamed_items(path) -> tuple[Any, list[Any], list[Any]]:
    """(root with the solutions replaced by a marker, the head seen by the consumer, the items it got)."""
    seen: list[Any] = []
    heads: list[Any] = []

    def consume(head, items):
        heads.append(list(head) if isinstance(head, list) else dict(head))
        seen.extend(items)
        return "streamed"

    with open(path, "rb") as fh:
        root = load(fh, str(path), Streamed(consume, index=5, key="Solutions"))
    return root, heads, seen


def test_every_dev_file_streams_to_what_yaml_load_builds(monkeypatch):
    files = dev_logic_files()
    assert len(files) == 30
    for path in files:
        with open(path, "rb") as fh:
            expected = yaml.load(fh, Loader=yaml.CSafeLoader)
        with open(path, "rb") as fh:
            assert first_difference(load(fh, str(path)), expected) is None, path

        root, heads, items = _streamed_items(path)
        assert first_difference(items, expected[5]) is None, path
        assert first_difference(heads, [expected[:5]]) is None, path
        assert root[5] == "streamed"
        assert first_difference(root[:5] + root[6:], expected[:5] + expected[6:]) is None, path

        streamed_model = read_logic_file(path)
        with monkeypatch.context() as m:  # the reader as it was: the whole file loaded, then converted
            m.setattr(reader, "load_yaml", lambda _path, _streamed=None, data=expected: data)
            whole_file_model = read_logic_file(path)
        assert streamed_model == whole_file_model, path
        del expected, items, root


def test_reading_the_largest_file_holds_less_than_its_text():
    # yaml.load alone peaks at ~34x the text; streamed, the peak is the model plus about one raw solution.
    largest = max(dev_logic_files(), key=lambda p: p.stat().st_size)
    read_logic_file(largest)  # warm the shared problem-type and key-set memos
    tracemalloc.start()
    try:
        model = read_logic_file(largest)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(model.solutions) == 444
    assert peak < largest.stat().st_size, (peak, largest.stat().st_size)
