"""Read clang offload bundles, compressed or not, and hand back the AMDGPU code object inside.

ROCm 7.x hipBLASLt ships every `<placeholder>.co` as a compressed offload bundle ("CCOB"; spec
rocm7_delta.md §3.4), so everything of ours that opens a `.co` goes through `code_object_bytes` and accepts
plain ELF and bundles alike. Written from the format as LLVM defines it (clang/lib/Driver/OffloadBundler.cpp,
llvm/llvm-project @000390203c87508e7d1bbf2002bb9ce819cef1b8; compression added by llvm-project PR 67162, the
64-bit v3 header made the default by PR 152600). Every integer is little-endian.

Compressed bundle:

    "CCOB" | version u16 | method u16 (0 zlib, 1 zstd)
    v1: uncompressed size u32                      (no total size: the payload runs to the end)
    v2: total file size u32 | uncompressed size u32
    v3: total file size u64 | uncompressed size u64
    hash u64: the first 8 bytes of the MD5 of the uncompressed bytes
    payload (zlib stream or zstd frame) up to the total size: an uncompressed bundle

Uncompressed bundle:

    "__CLANG_OFFLOAD_BUNDLE__" | entry count u64
    per entry: offset u64 | size u64 | id length u64 | id ("<kind>-<arch>-<vendor>-<os>-<env>-<target id>")
    the entries' bytes at their offsets (aligned by --bundle-align; the host entry of a `.co` is empty)

hipBLASLt's entry id for gfx942 reads `hipv4-amdgcn-amd-amdhsa--gfx942` (the bundler writes AMDHSA triples with
an empty environment whatever it was given).
"""

from __future__ import annotations

import hashlib
import io
import struct
import zlib
from pathlib import Path
from typing import BinaryIO

import attrs
import zstandard

from tensile_lite.errors import BuildError
from tensile_lite.targets import bare_gfx

ELF_MAGIC = b"\x7fELF"
BUNDLE_MAGIC = b"__CLANG_OFFLOAD_BUNDLE__"
COMPRESSED_MAGIC = b"CCOB"
# What a file is, by its first bytes.
PLAIN_ELF = "ELF"
BUNDLE = "offload bundle"
COMPRESSED_BUNDLE = "compressed offload bundle"
UNKNOWN = "unknown"

_METHODS = {0: "zlib", 1: "zstd"}
# version -> struct layout after magic, version and method: (total size?, uncompressed size, hash)
_LAYOUTS = {1: "<IQ", 2: "<IIQ", 3: "<QQQ"}
_COMMON = struct.Struct("<4sHH")
_U64 = struct.Struct("<Q")
_ENTRY = struct.Struct("<QQQ")  # offset, size, id length
_DEVICE_KINDS = ("hipv4", "hip", "openmp")


class BundleError(BuildError):
    """A file that claims to be an offload bundle but cannot be read as one."""


def container(data: bytes) -> str:
    """What `data` holds, judged by its magic: PLAIN_ELF, BUNDLE, COMPRESSED_BUNDLE or UNKNOWN."""
    if data.startswith(ELF_MAGIC):
        return PLAIN_ELF
    if data.startswith(COMPRESSED_MAGIC):
        return COMPRESSED_BUNDLE
    if data.startswith(BUNDLE_MAGIC):
        return BUNDLE
    return UNKNOWN


@attrs.frozen(slots=True)
class CompressedHeader:
    version: int
    method: str                # "zlib" or "zstd"
    header_size: int
    total_size: int | None     # None in v1, whose payload runs to the end of the data
    uncompressed_size: int
    hash: int                  # first 8 bytes of the MD5 of the uncompressed bundle, little-endian


def read_compressed_header(data: bytes, where: str = "data") -> CompressedHeader:
    """The CCOB header of `data`, or a BundleError naming `where` and what is wrong with it."""
    if len(data) < _COMMON.size or not data.startswith(COMPRESSED_MAGIC):
        raise BundleError(f"{where}: not a compressed offload bundle (no CCOB header)")
    _, version, method_code = _COMMON.unpack_from(data)
    layout = _LAYOUTS.get(version)
    if layout is None:
        raise BundleError(f"{where}: compressed offload bundle version {version} is unknown (known: 1, 2, 3)")
    method = _METHODS.get(method_code)
    if method is None:
        raise BundleError(f"{where}: compressed offload bundle uses compression method {method_code}, "
                          "neither zlib (0) nor zstd (1)")
    fields = struct.Struct(layout)
    header_size = _COMMON.size + fields.size
    if len(data) < header_size:
        raise BundleError(f"{where}: compressed offload bundle header truncated ({len(data)} bytes)")
    values = fields.unpack_from(data, _COMMON.size)
    total, uncompressed, digest = (None, *values) if version == 1 else values
    if total is not None and not header_size <= total <= len(data):
        raise BundleError(f"{where}: compressed offload bundle says it is {total} bytes long; the file has "
                          f"{len(data)} (truncated or damaged)")
    return CompressedHeader(version, method, header_size, total, uncompressed, digest)


def bundle_hash(data: bytes) -> int:
    """The hash a CCOB header holds for the uncompressed bundle `data`."""
    return int(_U64.unpack_from(hashlib.md5(data, usedforsecurity=False).digest())[0])


def decompress(data: bytes, where: str = "data") -> bytes:
    """The uncompressed bundle inside the compressed bundle `data`, checked against its size and hash."""
    header = read_compressed_header(data, where)
    payload = data[header.header_size:header.total_size]
    try:
        if header.method == "zstd":
            out = zstandard.ZstdDecompressor().decompress(payload, max_output_size=header.uncompressed_size)
        else:
            inflater = zlib.decompressobj()
            out = inflater.decompress(payload, header.uncompressed_size)
    except (zstandard.ZstdError, zlib.error) as exc:
        raise BundleError(f"{where}: the {header.method} payload of the compressed offload bundle is damaged "
                          f"({exc})") from None
    if len(out) != header.uncompressed_size:
        raise BundleError(f"{where}: compressed offload bundle inflates to {len(out)} bytes, its header says "
                          f"{header.uncompressed_size}")
    if bundle_hash(out) != header.hash:
        raise BundleError(f"{where}: compressed offload bundle content does not match the hash in its header")
    return out


@attrs.frozen(slots=True)
class BundleEntry:
    bundle_id: str
    offset: int
    size: int

    @property
    def kind(self) -> str:
        return self.bundle_id.split("-", 1)[0]

    @property
    def triple(self) -> str:
        """`<arch>-<vendor>-<os>-<env>` (the environment is empty in AMDHSA ids)."""
        return "-".join(self.bundle_id.split("-", 5)[1:5])

    @property
    def target_id(self) -> str:
        """What follows the triple: `gfx942`, `gfx90a:xnack+`; empty for the host entry."""
        parts = self.bundle_id.split("-", 5)
        return parts[5] if len(parts) == 6 else ""

    @property
    def processor(self) -> str:
        """The target id without its features: `gfx90a:xnack+` -> `gfx90a`."""
        return self.target_id.split(":", 1)[0].lower()

    def is_amdgcn(self) -> bool:
        return self.kind in _DEVICE_KINDS and self.triple.startswith("amdgcn-amd-amdhsa")


def bundle_entries(data: bytes, where: str = "data") -> tuple[BundleEntry, ...]:
    """The entries of the uncompressed bundle `data`, each checked to lie inside it."""
    if not data.startswith(BUNDLE_MAGIC):
        raise BundleError(f"{where}: not an offload bundle (no {BUNDLE_MAGIC.decode()} magic)")
    pos = len(BUNDLE_MAGIC)
    try:
        (count,) = _U64.unpack_from(data, pos)
        pos += _U64.size
        if count * _ENTRY.size > len(data) - pos:
            raise struct.error("more entries than the data can hold")
        entries = []
        for _ in range(count):
            offset, size, id_len = _ENTRY.unpack_from(data, pos)
            pos += _ENTRY.size
            raw_id = data[pos:pos + id_len]
            if len(raw_id) != id_len:
                raise struct.error("entry id runs past the end")
            pos += id_len
            entries.append(BundleEntry(raw_id.decode(errors="replace"), offset, size))
    except struct.error:
        raise BundleError(f"{where}: offload bundle header truncated") from None
    for e in entries:  # an entry's bytes lie after the header and inside the data
        if e.offset + e.size > len(data) or (e.size and e.offset < pos):
            raise BundleError(f"{where}: offload bundle entry {e.bundle_id} at {e.offset}+{e.size} lies "
                              f"outside the bundle ({len(data)} bytes, header {pos})")
    return tuple(entries)


def code_object_bytes(data: bytes, where: str = "data", gfx: str | None = None) -> bytes:
    """The AMDGPU code object of `data`: `data` itself unless it is a bundle (compressed or not), whose
    amdgcn entry for `gfx` (the only one when `gfx` is None) is returned. Not-a-bundle data is passed
    through untouched for the ELF reader to judge."""
    kind = container(data)
    if kind not in (BUNDLE, COMPRESSED_BUNDLE):
        return data
    bundle = decompress(data, where) if kind == COMPRESSED_BUNDLE else data
    entries = [e for e in bundle_entries(bundle, where) if e.is_amdgcn() and e.size]
    if gfx is not None:
        entries = [e for e in entries if e.processor == bare_gfx(gfx)]
    if len(entries) != 1:
        ids = ", ".join(e.bundle_id for e in bundle_entries(bundle, where)) or "none"
        want = f" for {bare_gfx(gfx)}" if gfx else ""
        how = "no" if not entries else "more than one"
        raise BundleError(f"{where}: offload bundle has {how} amdgcn code object{want} (entries: {ids})")
    entry = entries[0]
    return bundle[entry.offset:entry.offset + entry.size]


def open_code_object(path: Path) -> tuple[BinaryIO, str]:
    """The code object of the file at `path` as a binary stream, and what the file is: the file itself
    when it is not a bundle (streamed, as large plain code objects always were), else the ELF taken out of
    the bundle, in memory."""
    f = Path(path).open("rb")
    head = f.read(len(BUNDLE_MAGIC))
    kind = container(head)
    if kind in (BUNDLE, COMPRESSED_BUNDLE):
        with f:
            return io.BytesIO(code_object_bytes(head + f.read(), str(path))), kind
    f.seek(0)
    return f, kind


def read_code_object_file(path: Path) -> bytes:
    """The code object bytes of the file at `path`, unbundled when it is a bundle."""
    return code_object_bytes(Path(path).read_bytes(), str(path))


def is_bundle_file(path: Path) -> bool:
    """Whether the file at `path` starts like an offload bundle (compressed or not)."""
    with Path(path).open("rb") as f:
        head = f.read(len(BUNDLE_MAGIC))
    return container(head) in (BUNDLE, COMPRESSED_BUNDLE)
