"""Every library format round-trips through the one reader; compressed forms are what their readers expect."""

from __future__ import annotations

import zlib
from pathlib import Path

import msgpack
import pytest
import zstandard
from hypothesis import given, settings
from hypothesis import strategies as st

from tensile_lite.library import FORMATS, decode, encode, file_name, read_dat
from tensile_lite.library.formats import INDEXED_FORMATS, ZSTD_MAGIC, DatError, detect_format, write_atomic
from tests.library.test_reference import strict_equal

_text = st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=20)
_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1)
            | st.floats(allow_nan=False, allow_infinity=False) | _text)
trees = st.recursive(_scalars, lambda kids: st.lists(kids, max_size=5) | st.dictionaries(_text, kids, max_size=5),
                     max_leaves=40)
documents = st.fixed_dictionaries({"solutions": st.lists(trees, max_size=3), "library": trees})


@settings(max_examples=60, deadline=None)
@given(doc=documents, fmt=st.sampled_from([f for f in FORMATS if f not in INDEXED_FORMATS]))
def test_every_format_round_trips(doc, fmt):
    # The indexed formats need solutions with indices; tests/library/test_indexed.py round-trips them.
    data = encode(doc, fmt)
    assert strict_equal(decode(data, file_name("TensileLibrary_x_gfx942", fmt)), doc)
    assert encode(doc, fmt) == data  # deterministic bytes


@pytest.mark.parametrize("fmt", FORMATS)
def test_key_order_is_kept(fmt):
    # Map key order is the writer's (upstream's field order); no format may re-sort it.
    doc = {"solutions": [], "library": {"type": "Matching", "properties": [], "table": [], "distance": "Equality"}}
    back = decode(encode(doc, fmt), file_name("x", fmt))
    assert list(back) == ["solutions", "library"]
    assert list(back["library"]) == ["type", "properties", "table", "distance"]


def test_file_names():
    assert file_name("TensileLibrary_lazy_gfx942", "msgpack") == "TensileLibrary_lazy_gfx942.dat"
    assert file_name("TensileLibrary_lazy_gfx942", "msgpack-zstd") == "TensileLibrary_lazy_gfx942.dat"
    assert file_name("TensileLibrary_lazy_gfx942", "msgpack-zlib") == "TensileLibrary_lazy_gfx942.dat.zlib"
    assert file_name("TensileLibrary_lazy_gfx942", "msgpack-indexed") == "TensileLibrary_lazy_gfx942.dat"
    assert file_name("TensileLibrary_lazy_gfx942", "msgpack-indexed-zlib") == "TensileLibrary_lazy_gfx942.dat.zlib"
    assert file_name("TensileLibrary_lazy_gfx942", "yaml") == "TensileLibrary_lazy_gfx942.yaml"
    with pytest.raises(Exception, match="unknown library format"):
        file_name("x", "json")


DOC = {"solutions": [{"index": i, "name": f"solution{i}", "flag": i % 2 == 0} for i in range(200)],
       "library": {"type": "Single", "index": 3}}


def test_zstd_is_one_frame_with_content_size():
    data = encode(DOC, "msgpack-zstd")
    plain = encode(DOC, "msgpack")
    assert data[:4] == ZSTD_MAGIC
    # The nixpkgs-patched reader refuses frames that do not record their size.
    assert zstandard.frame_content_size(data) == len(plain)
    assert zstandard.ZstdDecompressor().decompress(data) == plain
    assert len(data) < len(plain) // 5


def test_zlib_is_one_stream_of_the_msgpack_bytes():
    data = encode(DOC, "msgpack-zlib")
    assert zlib.decompress(data) == encode(DOC, "msgpack")


def test_msgpack_is_plain_msgpack():
    assert msgpack.unpackb(encode(DOC, "msgpack"), raw=False) == DOC


def test_reader_sniffs_zstd_by_content_not_name(tmp_path: Path):
    path = tmp_path / "TensileLibrary_lazy_gfx942.dat"
    path.write_bytes(encode(DOC, "msgpack-zstd"))
    assert read_dat(path) == DOC
    assert detect_format(path) == "msgpack-zstd"
    path.write_bytes(encode(DOC, "msgpack"))
    assert read_dat(path) == DOC
    assert detect_format(path) == "msgpack"


@pytest.mark.parametrize("name,data", [
    ("a.dat", b"\xc1\xc1\xc1"),  # never-used msgpack byte
    ("a.dat", ZSTD_MAGIC + b"\x00\x01\x02"),  # a truncated zstd frame
    ("a.dat.zlib", b"not zlib"),
    ("a.yaml", b"key: [unclosed"),
])
def test_corrupt_files_give_a_clear_error(tmp_path: Path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(DatError, match=name):
        read_dat(path)


def test_missing_file_is_a_clear_error(tmp_path: Path):
    with pytest.raises(DatError, match="cannot read"):
        read_dat(tmp_path / "absent.dat")


def test_atomic_write_leaves_no_partial_file(tmp_path: Path):
    target = tmp_path / "lib" / "x.dat"
    write_atomic(target, b"complete")
    assert target.read_bytes() == b"complete"
    with pytest.raises(TypeError):
        write_atomic(target, "not bytes")  # type: ignore[arg-type]  # fails mid-write
    assert target.read_bytes() == b"complete"
    assert sorted(p.name for p in target.parent.iterdir()) == ["x.dat"]
