"""Encoding `.dat` documents in each library format, reading any of them back, and atomic file writes.

- `msgpack`: what a stock runtime reads. Maps keep the key order they were built in, so bytes are stable.
- `msgpack-zstd`: the same bytes in one zstd frame that records its content size, file still `<name>.dat`
  (the nixpkgs-patched reader sniffs the frame magic and needs the size). Long-distance matching finds
  the repetition between solutions, which is what makes these files small.
- `msgpack-zlib`: one zlib stream in `<name>.dat.zlib` (newer upstream runtimes probe that name first).
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

from tensile_lite.errors import BuildError, TensileLiteError, Where

# libyaml when PyYAML has it; the pure-Python classes give the same output, slower.
_Dumper = yaml.CSafeDumper if yaml.__with_libyaml__ else yaml.SafeDumper
_Loader = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader

FORMATS: tuple[str, ...] = ("msgpack", "msgpack-zstd", "msgpack-zlib", "yaml")
DEFAULT_FORMAT = "msgpack"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_LEVEL = 19
# 2^27 = 128 MiB window: covers the largest upstream .dat (~45 MB) so every repeat is in reach.
ZSTD_WINDOW_LOG = 27
ZLIB_LEVEL = 9


class DatError(TensileLiteError):
    """A library file that cannot be decoded."""


def file_name(stem: str, fmt: str) -> str:
    """The file a library named `stem` is written to in format `fmt`."""
    _check_format(fmt)
    if fmt == "yaml":
        return stem + ".yaml"
    if fmt == "msgpack-zlib":
        return stem + ".dat.zlib"
    return stem + ".dat"


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
    packed = msgpack.packb(document, use_bin_type=True)
    if fmt == "msgpack-zstd":
        return _zstd_compressor().compress(packed)
    if fmt == "msgpack-zlib":
        return zlib.compress(packed, ZLIB_LEVEL)
    return packed


def _unpack(data: bytes, path: str) -> Any:
    try:
        return msgpack.unpackb(data, raw=False, strict_map_key=False)
    except (ValueError, msgpack.UnpackException) as exc:
        raise DatError(f"not a msgpack document: {exc}", Where(file=path)) from None


def decode(data: bytes, name: str = "") -> Any:
    """Decode bytes of any format; `name` (a file name) tells YAML and zlib apart, zstd is sniffed."""
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


def detect_format(path: str | Path, data: bytes | None = None) -> str:
    name = Path(path).name
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    if name.endswith(".zlib"):
        return "msgpack-zlib"
    head = data[:4] if data is not None else Path(path).read_bytes()[:4]
    return "msgpack-zstd" if head == ZSTD_MAGIC else "msgpack"


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
