"""The content-addressed kernel cache: one assembled object per key, shared by builds and machines.

A key is a SHA-256 over everything the object's bytes depend on (`object_key`): the cache format, the
assembler's identity (`assembler_identity`: its resolved binary, that binary's content, its `--version`
text and the LLVM libraries beside it), the assembler's flags (target, code object version, wave size),
and the kernel's content. The content is either the assembly text itself, or, for a source that can name
it without rendering (`KernelSource.cache_identity`, the GEMM writer's), that identity plus `code_fingerprint`
(every file of the tensile-lite package and the Python version): the text is a pure function of the two, so
a hit then skips generating the text as well as assembling it. Any edit to tensile-lite changes the
fingerprint, so a stale text can never be served; the price is that a new tensile-lite starts cold.

An entry is `<root>/v2/<key[:2]>/<key>.o` holding a header (magic, SHA-256 and length of the payload) and
the payload: one JSON line of the kernel's facts (what its text said of it, `KernelSource.text_facts`: a hit
that skips the text must still know them) and the object. It is written to a temporary in the same folder and renamed into place, so concurrent builds
sharing a cache only ever see whole entries (two writers of one key write the same bytes). Every read checks
the payload's checksum: a bad entry is deleted and reported, and the kernel is built again, never linked.
A hit touches the entry; `evict` removes the least recently used ones until the cache fits its size limit.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import attrs

from tensile_lite.codeobj.toolchain import Toolchain, version_text

__all__ = ["CACHE_ENV", "DEFAULT_MAX_SIZE", "CacheStats", "Fetched", "KernelCache", "assembler_identity",
           "code_fingerprint", "object_key", "parse_size"]

CACHE_ENV = "TENSILE_LITE_CACHE_DIR"
DEFAULT_MAX_SIZE = 2 * 2**30
FORMAT = 2
_MAGIC = b"tensile-lite kernel cache 2\n"
_HEADER = len(_MAGIC) + 64 + 1 + 16 + 1  # magic, hex sha256, space, hex length, newline
_STALE_TEMP = 3600.0  # seconds; a temporary lives for milliseconds unless its writer was killed
_PACKAGE = Path(__file__).resolve().parent.parent


@functools.cache
def code_fingerprint() -> str:
    """Hex SHA-256 of every file of the tensile-lite package (path and bytes) and the Python version: what
    renders a kernel's text from its identity. Computed once per process."""
    h = hashlib.sha256(f"python {sys.version}\n".encode())
    for path in sorted(p for p in _PACKAGE.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        h.update(path.relative_to(_PACKAGE).as_posix().encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def assembler_identity(toolchain: Toolchain) -> str:
    """Hex SHA-256 naming the assembler that makes the objects: its resolved binary (path and content), its
    `--version` text, and the LLVM libraries beside it by name, size and mtime (Debian's clang is a small
    driver over libLLVM, whose ~150 MB are not hashed at every start). Computed once per build."""
    real = toolchain.assembler.resolve()
    h = hashlib.sha256(str(real).encode() + b"\0")
    h.update(hashlib.sha256(real.read_bytes()).digest())
    h.update(version_text(toolchain.assembler).encode())
    lib_dir = real.parent.parent / "lib"
    if lib_dir.is_dir():
        for lib in sorted(lib_dir.glob("lib*.so*")):
            if lib.name.startswith(("libLLVM", "libclang-cpp")) and lib.is_file():
                st = lib.stat()
                h.update(f"{lib.name}:{st.st_size}:{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def object_key(assembler: str, flags: Sequence[str], kind: str, content: bytes) -> str:
    """The entry key. `kind` is "text" (content: the assembly text) or "source" (content: the source's
    identity; `code_fingerprint` is added here)."""
    if kind not in ("text", "source"):
        raise ValueError(f"unknown kernel content kind {kind!r}")
    h = hashlib.sha256(f"format {FORMAT}\nassembler {assembler}\n".encode())
    h.update(("flags " + "\0".join(flags) + "\n").encode())
    if kind == "source":
        h.update(f"code {code_fingerprint()}\n".encode())
    h.update(f"{kind} {len(content)}\n".encode())
    h.update(content)
    return h.hexdigest()


def parse_size(text: str) -> int:
    """`2G`, `500M`, `64k`, `1000` (bytes; binary units) -> bytes."""
    units = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in units else ""
    number = t[:-1] if unit else t
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"expected a size such as 2G, 500M or 1000000, got {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"expected a size >= 0, got {text!r}")
    return int(value * units[unit])


@attrs.frozen(slots=True)
class Fetched:
    """The outcome of one lookup: `hit` or not, and `corrupt` naming bad entries found (and removed) on the way."""

    hit: bool
    corrupt: str | None = None
    facts: tuple[tuple[str, int], ...] = ()  # the facts stored with the object


@attrs.frozen(slots=True)
class CacheStats:
    hits: int = 0
    stored: int = 0
    corrupt: int = 0
    evicted: int = 0
    evicted_bytes: int = 0
    size: int = 0  # bytes held after eviction

    def describe(self, root: Path) -> str:
        return (f"kernel cache {root}: {self.hits} hit(s), {self.stored} object(s) stored, {self.corrupt} corrupt "
                f"entr{'y' if self.corrupt == 1 else 'ies'} rebuilt, {self.evicted} evicted "
                f"({self.evicted_bytes / 2**20:.2f} MiB), {self.size / 2**20:.2f} MiB held")


def _paths(roots: Sequence[Path]) -> tuple[Path, ...]:
    return tuple(Path(r) for r in roots)


@attrs.frozen(slots=True)
class KernelCache:
    """One cache folder as a build sees it: the assembler identity is fixed for the build, so every key of
    the build is made by `key`. `max_size` None: never evicted (a shard's store). `extra_roots` are read
    after `root` and never written or evicted (a shard build reads the user's cache there, a merge the
    other shards); an object found there is copied into `root` when it is `writable`."""

    root: Path = attrs.field(converter=Path)
    assembler: str
    max_size: int | None = DEFAULT_MAX_SIZE
    extra_roots: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    writable: bool = True

    def key(self, flags: Sequence[str], kind: str, content: bytes) -> str:
        return object_key(self.assembler, flags, kind, content)

    def entry(self, key: str, root: Path | None = None) -> Path:
        return (root or self.root) / f"v{FORMAT}" / key[:2] / f"{key}.o"

    def fetch(self, key: str, dest: Path) -> Fetched:
        """Write the object of `key` to `dest` if a root holds a sound entry; bad ones are removed."""
        corrupt: list[str] = []
        for root in (self.root, *self.extra_roots):
            path = self.entry(key, root)
            try:
                blob = path.read_bytes()
            except FileNotFoundError:
                continue
            payload, why = _unpack(blob)
            facts, obj = _split(payload) if payload is not None else ((), b"")
            if facts is None:
                payload, why = None, "unreadable facts line (corrupt entry)"
            if payload is None:
                if root == self.root and self.writable:
                    with contextlib.suppress(OSError):
                        path.unlink()
                    corrupt.append(f"{path}: {why}; removed, the kernel is built again")
                else:
                    corrupt.append(f"{path}: {why}; not used")
                continue
            assert facts is not None
            dest.write_bytes(obj)
            if root == self.root:
                with contextlib.suppress(OSError):  # most recently used: evicted last
                    os.utime(path)
            elif self.writable:
                self.store(key, dest, facts)
            return Fetched(True, "; ".join(corrupt) or None, facts)
        return Fetched(False, "; ".join(corrupt) or None)

    def store(self, key: str, obj: Path, facts: Sequence[tuple[str, int]] = ()) -> None:
        """Add the object file `obj` (and the kernel's `facts`) as the entry of `key`, atomically (a
        temporary renamed into place)."""
        if not self.writable:
            return
        path = self.entry(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        payload = json.dumps(sorted([k, v] for k, v in facts), separators=(",", ":")).encode() + b"\n" \
            + obj.read_bytes()
        tmp = path.with_name(f".tmp-{os.getpid()}-{os.urandom(6).hex()}")
        try:
            tmp.write_bytes(_pack(payload))
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)

    def keys(self) -> set[str]:
        """The keys of every entry under `root`."""
        return {p.stem for p in (self.root / f"v{FORMAT}").glob("??/*.o")}

    def evict(self) -> tuple[int, int, int]:
        """Remove least recently used entries until the cache fits `max_size`, and temporaries that killed
        writers left. Returns (entries removed, bytes removed, bytes held). Safe while other builds use the
        cache: an entry removed under a reader is a miss for it, never a partial file."""
        entries: list[tuple[float, str, Path, int]] = []
        now = time.time()
        for folder in sorted((self.root / f"v{FORMAT}").glob("??")):
            for path in folder.iterdir():
                try:
                    st = path.stat()
                except FileNotFoundError:
                    continue
                if path.name.startswith(".tmp-"):
                    if now - st.st_mtime > _STALE_TEMP:
                        path.unlink(missing_ok=True)
                elif path.suffix == ".o":
                    entries.append((st.st_mtime, path.name, path, st.st_size))
        held = sum(e[3] for e in entries)
        removed = removed_bytes = 0
        if self.max_size is not None:
            for _mtime, _name, path, size in sorted(entries):
                if held <= self.max_size:
                    break
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                held -= size
                removed += 1
                removed_bytes += size
        return removed, removed_bytes, held


def _pack(payload: bytes) -> bytes:
    return _MAGIC + f"{hashlib.sha256(payload).hexdigest()} {len(payload):016x}\n".encode() + payload


def _split(payload: bytes) -> tuple[tuple[tuple[str, int], ...] | None, bytes]:
    """(facts, object) of a payload; facts None when the facts line is not what `store` writes."""
    line, newline, obj = payload.partition(b"\n")
    try:
        pairs = json.loads(line) if newline else None
        facts = tuple((str(k), int(v)) for k, v in pairs) if isinstance(pairs, list) else None
    except (ValueError, TypeError):
        return None, b""
    return facts, obj


def _unpack(blob: bytes) -> tuple[bytes | None, str]:
    """The payload of an entry, or None and why the entry is bad."""
    if not blob.startswith(_MAGIC) or len(blob) < _HEADER:
        return None, "not a kernel cache entry (bad header)"
    digest, _, size = blob[len(_MAGIC):_HEADER - 1].decode(errors="replace").partition(" ")
    payload = blob[_HEADER:]
    try:
        want = int(size, 16)
    except ValueError:
        return None, "not a kernel cache entry (bad header)"
    if len(payload) != want:
        return None, f"truncated entry ({len(payload)} of {want} bytes)"
    if hashlib.sha256(payload).hexdigest() != digest:
        return None, "checksum mismatch (corrupt entry)"
    return payload, ""
