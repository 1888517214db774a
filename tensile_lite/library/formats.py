"""Encoding `.dat` documents in each library format, reading any of them back, and atomic file writes.

- `msgpack`: what a stock runtime reads. Maps keep the key order they were built in, so bytes are stable.
- `msgpack-zstd`: the same bytes in one zstd frame that records its content size, file still `<name>.dat`
  (the nixpkgs-patched reader sniffs the frame magic and needs the size). Long-distance matching finds
  the repetition between solutions, which is what makes these files small.
- `msgpack-zlib`: one zlib stream in `<name>.dat.zlib` (newer upstream runtimes probe that name first).
- `msgpack-indexed`, `msgpack-indexed-zlib`: the same two containers holding the indexed layout
  (`format_version` 2, indexed.py) that rocm-libraries develop's runtime reads; mapping files stay plain.
- `yaml`: `<name>.yaml`, for reading by eye; the runtime's YAML reader takes the same tree.
"""

from __future__ import annotations

import os
import secrets
import zlib
from pathlib import Path
from typing import Any

import msgpack
import yaml
import zstandard

from tensile_lite.errors import BuildError, DatError, Where
from tensile_lite.library import indexed

# libyaml when PyYAML has it; the pure-Python classes give the same output, slower.
_Dumper = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper
_Loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader

# The indexed formats come first: where two formats share a file name, the later one is the plain layout
# (readers that try the formats in order, and the dev-set digest record, see the format-1 file).
FORMATS: tuple[str, ...] = ("msgpack-indexed", "msgpack-indexed-zlib", "msgpack", "msgpack-zstd", "msgpack-zlib",
                             "yaml")
INDEXED_FORMATS: tuple[str, ...] = ("msgpack-indexed", "msgpack-indexed-zlib")
_ZLIB_FORMATS = ("msgpack-zlib", "msgpack-indexed-zlib")
DEFAULT_FORMAT = "msgpack"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_LEVEL = 19
# 2^27 = 128 MiB window: covers the largest upstream .dat (~45 MB) so every repeat is in reach.
ZSTD_WINDOW_LOG = 27
ZLIB_LEVEL = 9


def file_name(stem: str, fmt: str) -> str:
    """The file a library named `stem` is written to in format `fmt`."""
    _check_format(fmt)
    if fmt == "yaml":
        return stem + ".yaml"
    if fmt in _ZLIB_FORMATS:
        return stem + ".dat.zlib"
    return stem + ".dat"


def indexed_like(fmt: str) -> str:
    """The indexed format in the container of `fmt` (upstream's `msgpack-indexed` is zlib-compressed exactly
    where its `msgpack` is)."""
    return "msgpack-indexed-zlib" if fmt in _ZLIB_FORMATS else "msgpack-indexed"


def plain_like(fmt: str) -> str:
    """The format-1 msgpack format in the container of `fmt` (what mapping files use: they have no indexed
    form, and upstream writes them as plain msgpack even into a YAML build)."""
    return "msgpack-zlib" if fmt in _ZLIB_FORMATS else "msgpack-zstd" if fmt == "msgpack-zstd" else "msgpack"


def _check_format(fmt: str) -> None:
    if fmt not in FORMATS:
        raise BuildError(f"unknown library format {fmt!r} (expected one of {', '.join(FORMATS)})")


def _zstd_compressor() -> zstandard.ZstdCompressor:
    params = zstandard.ZstdCompressionParameters.from_level(
        ZSTD_LEVEL, window_log=ZSTD_WINDOW_LOG, enable_ldm=True, write_content_size=True, threads=0)
    return zstandard.ZstdCompressor(compression_params=params)


def encode(document: Any, fmt: str = DEFAULT_FORMAT) -> bytes:
    _check_format(fmt)
    if fmt == "yaml":
        text = yaml.dump(document, Dumper=_Dumper, sort_keys=False, default_flow_style=None, width=120)
        return text.encode("utf-8")
    if fmt in INDEXED_FORMATS:
        document = indexed.to_indexed(document)
    packed = msgpack.packb(document, use_bin_type=True)
    if fmt == "msgpack-zstd":
        return _zstd_compressor().compress(packed)
    if fmt in _ZLIB_FORMATS:
        return zlib.compress(packed, ZLIB_LEVEL)
    return packed


def _unpack(data: bytes, path: str) -> Any:
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as exc:
        raise DatError(f"not a msgpack document: {exc}", Where(file=path)) from None


def decode(data: bytes, name: str = "") -> Any:
    """Decode bytes of any format to the format-1 document; `name` (a file name) tells YAML and zlib apart,
    zstd and the indexed layout are sniffed. An indexed file is checked as the runtime checks it on load."""
    doc = decode_raw(data, name)
    if not indexed.is_indexed(doc):
        return doc
    if doc["format_version"] == 1:  # the runtime's spelling of the plain layout
        return {k: v for k, v in doc.items() if k != "format_version"}
    try:
        return indexed.from_indexed(doc)
    except DatError as exc:
        raise DatError(exc.message, Where(file=name or None)) from None


def decode_raw(data: bytes, name: str = "") -> Any:
    """Decode bytes of any format to the document as stored (an indexed file stays indexed)."""
    if name.endswith((".yaml", ".yml")):
        try:
            return yaml.load(data, Loader=_Loader)
        except yaml.YAMLError as exc:
            raise DatError(f"not a YAML document: {exc}", Where(file=name)) from None
    if data[:4] == ZSTD_MAGIC:
        try:
            return _unpack(zstandard.ZstdDecompressor().decompress(data), name)
        except zstandard.ZstdError as exc:
            raise DatError(f"bad zstd frame: {exc}", Where(file=name)) from None
    if name.endswith(".zlib"):
        try:
            return _unpack(zlib.decompress(data), name)
        except zlib.error as exc:
            raise DatError(f"bad zlib stream: {exc}", Where(file=name)) from None
    return _unpack(data, name)


def read_dat(path: str | Path) -> Any:
    """Read a library file written in any of the formats."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatError(f"cannot read: {exc.strerror}", Where(file=str(path))) from None
    return decode(data, path.name)


# How an indexed document starts: a map of 4 or 5 keys whose first key is the 14-byte string `format_version`.
_INDEXED_HEAD = (b"\x84\xaeformat_version", b"\x85\xaeformat_version")


def detect_format(path: str | Path, data: bytes | None = None) -> str:
    name = Path(path).name
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    if data is None:
        data = Path(path).read_bytes()
    if name.endswith(".zlib"):
        try:
            head = zlib.decompressobj().decompress(data, 16)
        except zlib.error:
            head = b""
        return "msgpack-indexed-zlib" if head.startswith(_INDEXED_HEAD) else "msgpack-zlib"
    if data[:4] == ZSTD_MAGIC:
        return "msgpack-zstd"
    return "msgpack-indexed" if data.startswith(_INDEXED_HEAD) else "msgpack"


def write_atomic(path: Path, data: bytes) -> None:
    """Write to a temporary name in the same folder, then rename: readers never see a partial file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    # os.open with 0o666 lets the umask decide the final permissions, as for any ordinary file.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:  # includes KeyboardInterrupt: never leave the temporary behind
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
