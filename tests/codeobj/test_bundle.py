"""Offload bundles: our reader against the real clang-offload-bundler (round trips, `--unbundle`, every header
version it writes), its checks on damaged files, how the bundler is found, and that bundling is deterministic."""

from __future__ import annotations

import hashlib
import os
import stat
import struct
import subprocess
import tempfile
import zlib
from pathlib import Path

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tensile_lite.codeobj.assemble import assemble, link
from tensile_lite.codeobj.bundle import (
    BUNDLE,
    COMPRESSED_BUNDLE,
    PLAIN_ELF,
    BundleError,
    bundle_entries,
    code_object_bytes,
    container,
    decompress,
    read_compressed_header,
)
from tensile_lite.codeobj.bundler import (
    IGNORED_ENV,
    OffloadBundler,
    compress,
    compress_argv,
    device_target,
    find_offload_bundler,
)
from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.codeobj.finish import CodeObjectFinish, finish_code_object, finish_for
from tensile_lite.codeobj.trivial import TrivialKernel
from tensile_lite.errors import BuildError, ToolchainError, ToolFailure
from tensile_lite.interfaces import INTERFACES


@pytest.fixture(scope="module")
def linked(toolchain, tmp_path_factory) -> Path:
    """A two-kernel gfx942 library, linked as the build links one."""
    d = tmp_path_factory.mktemp("linked")
    objs = [assemble(toolchain, TrivialKernel(n, "gfx942").assembly_text(), "gfx942", d / f"{n}.o")
            for n in ("alpha", "beta")]
    return link(toolchain, objs, d / "lib.co.raw")


def _unbundle(bundler: OffloadBundler, bundled: Path, out: Path, gfx: str = "gfx942") -> bytes:
    subprocess.run([str(bundler.path), "--type=o", f"--targets={device_target(gfx)}", f"--input={bundled}",
                    f"--output={out}", "--unbundle"], check=True, capture_output=True)
    return out.read_bytes()


# --- the real bundler ------------------------------------------------------------------------------------


def test_round_trip_gives_back_the_exact_code_object(each_bundler, linked, tmp_path):
    dest = compress(each_bundler, linked, tmp_path / "lib.co", "gfx942:xnack-")
    data = dest.read_bytes()
    raw = linked.read_bytes()
    assert container(data) == COMPRESSED_BUNDLE and len(data) < len(raw)
    header = read_compressed_header(data)
    # LLVM 19 writes v2, LLVM 21+ v3 (llvm-project PR 152600); both with zstd when they have it.
    assert header.version == (3 if each_bundler.path.name.endswith("-22") else 2)
    assert header.method == "zstd" and header.total_size == len(data)
    inner = decompress(data)
    assert container(inner) == BUNDLE and len(inner) == header.uncompressed_size
    entries = {e.bundle_id: e for e in bundle_entries(inner)}
    assert set(entries) == {"host-x86_64-unknown-linux-gnu-", "hipv4-amdgcn-amd-amdhsa--gfx942"}
    device = entries["hipv4-amdgcn-amd-amdhsa--gfx942"]
    assert device.offset % 4096 == 0 and device.size == len(raw)  # --bundle-align=4096
    assert entries["host-x86_64-unknown-linux-gnu-"].size == 0
    assert code_object_bytes(data) == code_object_bytes(data, gfx="gfx942") == raw
    assert _unbundle(each_bundler, dest, tmp_path / "unbundled.co") == raw
    info = read_code_object(dest)
    assert info.container == COMPRESSED_BUNDLE and info.names() == ("alpha", "beta")
    assert info.target == "amdgcn-amd-amdhsa--gfx942"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(payload=st.one_of(st.binary(min_size=1, max_size=3000),
                         st.binary(min_size=1, max_size=64).map(lambda b: b * 200)))
def test_reader_agrees_with_the_bundler_on_any_payload(bundler, payload):
    """Incompressible and repetitive payloads of any size, across the 4096-byte alignment."""
    with tempfile.TemporaryDirectory() as tmp:
        raw, dest = Path(tmp) / "in.raw", Path(tmp) / "out.co"
        raw.write_bytes(payload)
        compress(bundler, raw, dest, "gfx90a")
        data = dest.read_bytes()
        assert code_object_bytes(data, gfx="gfx90a") == payload
        assert _unbundle(bundler, dest, Path(tmp) / "back", "gfx90a") == payload


def test_bundling_is_deterministic_whatever_the_paths_and_environment(bundler, linked, tmp_path, monkeypatch):
    first = compress(bundler, linked, tmp_path / "a.co", "gfx942").read_bytes()
    again = compress(bundler, linked, tmp_path / "b.co", "gfx942").read_bytes()
    elsewhere = tmp_path / "deeper" / "other name"
    elsewhere.mkdir(parents=True)
    moved = elsewhere / "renamed.raw"
    moved.write_bytes(linked.read_bytes())
    moved_out = compress(bundler, moved, elsewhere / "x.co", "gfx942").read_bytes()
    # The bundler's own knobs (level, verbosity) would change its bytes; a build must not pick them up.
    monkeypatch.setenv("OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "19")
    monkeypatch.setenv("OFFLOAD_BUNDLER_VERBOSE", "1")
    knobs = compress(bundler, linked, tmp_path / "c.co", "gfx942").read_bytes()
    assert first == again == moved_out == knobs
    assert {"OFFLOAD_BUNDLER_COMPRESSION_LEVEL", "OFFLOAD_BUNDLER_COMPRESS"} <= set(IGNORED_ENV)


def test_the_knobs_do_change_the_bytes_when_not_removed(bundler, linked, tmp_path):
    """Guards the previous test: were the knobs not removed, they would show."""
    argv = compress_argv(bundler, linked, tmp_path / "plain.co", "gfx942")
    subprocess.run(argv, check=True, capture_output=True)
    argv19 = compress_argv(bundler, linked, tmp_path / "level19.co", "gfx942")
    subprocess.run(argv19, check=True, capture_output=True,
                   env={**os.environ, "OFFLOAD_BUNDLER_COMPRESSION_LEVEL": "19"})
    assert (tmp_path / "plain.co").read_bytes() != (tmp_path / "level19.co").read_bytes()
    assert code_object_bytes((tmp_path / "level19.co").read_bytes()) == linked.read_bytes()


def test_bundler_failure_names_the_file_and_leaves_nothing(tmp_path):
    fake = _script(tmp_path / "bundler", "echo 'error: something broke' >&2; exit 1")
    raw = tmp_path / "x.raw"
    raw.write_bytes(b"\x7fELF" + b"\0" * 60)
    with pytest.raises(ToolFailure, match=r"(?s)compressing lib\.co failed .*something broke"):
        compress(OffloadBundler(fake, "test"), raw, tmp_path / "lib.co", "gfx942")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundler", "x.raw"]


# --- finding the bundler -------------------------------------------------------------------------------


def _script(path: Path, body: str) -> Path:
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _one_line(exc: pytest.ExceptionInfo[BaseException]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_bundler_without_compress_fails_early_in_one_line(tmp_path):
    old = _script(tmp_path / "clang-offload-bundler", "echo \"clang-offload-bundler: Unknown command line "
                  "argument '--compress'.\" >&2; exit 1")
    with pytest.raises(ToolchainError) as exc:
        find_offload_bundler(str(old))
    line = _one_line(exc)
    assert str(old) in line and "cannot compress" in line and "Unknown command line argument" in line
    assert "--no-compress" in line and "--offload-bundler" in line


def test_bundler_that_writes_no_compressed_bundle_is_refused(tmp_path):
    silent = _script(tmp_path / "quiet-bundler", "exit 0")
    with pytest.raises(ToolchainError, match=r"cannot compress code objects .*--no-compress"):
        find_offload_bundler(str(silent))


def test_missing_explicit_bundler_is_named(tmp_path):
    with pytest.raises(ToolchainError) as exc:
        find_offload_bundler(str(tmp_path / "nope"))
    line = _one_line(exc)
    assert "nope" in line and "--offload-bundler" in line and "--no-compress" in line


def test_no_bundler_anywhere_says_what_was_tried(monkeypatch, tmp_path):
    monkeypatch.setattr("tensile_lite.codeobj.bundler.shutil.which", lambda _name: None)
    with pytest.raises(ToolchainError) as exc:
        find_offload_bundler(None, None, env={"ROCM_PATH": str(tmp_path)})
    line = _one_line(exc)
    assert "none was found" in line and str(tmp_path) in line and "--no-compress" in line


def test_bundler_is_found_next_to_the_assembler(toolchain, bundler):
    found = find_offload_bundler(None, toolchain, env={})
    assert found.path.name.startswith("clang-offload-bundler") and found.path.is_file()


def test_finish_follows_the_interface_and_looks_for_no_bundler_when_plain(toolchain, bundler, tmp_path):
    absent = str(tmp_path / "no-such-bundler")
    for name, interface in INTERFACES.items():
        if not interface.compress_code_objects:  # plain: the bundler is never looked for, even a bad one
            assert finish_for(None, name, absent, toolchain) == CodeObjectFinish()
        else:
            assert finish_for(None, name, None, toolchain).compresses
            with pytest.raises(ToolchainError):
                finish_for(None, name, absent, toolchain)
        assert finish_for(False, name, absent, toolchain) == CodeObjectFinish()  # --no-compress
    assert finish_for(True, "hipblaslt-2024", None, toolchain).compresses


def test_finish_without_bundler_keeps_or_moves_the_linked_file(tmp_path):
    raw = tmp_path / "lib.co"
    raw.write_bytes(b"\x7fELF plain")
    assert finish_code_object(raw, raw, "gfx942", CodeObjectFinish()) == raw
    assert raw.read_bytes() == b"\x7fELF plain"
    other = tmp_path / "moved.co"
    finish_code_object(raw, other, "gfx942", CodeObjectFinish())
    assert other.read_bytes() == b"\x7fELF plain" and not raw.exists()
    assert CodeObjectFinish().link_target(other, tmp_path / "tmp") == other


def test_compressing_finish_removes_the_raw_file(bundler, linked, tmp_path):
    raw = tmp_path / "lib.co.raw"
    raw.write_bytes(linked.read_bytes())
    finish = CodeObjectFinish(bundler)
    assert finish.link_target(tmp_path / "lib.co", tmp_path) == raw
    finish_code_object(raw, tmp_path / "lib.co", "gfx942", finish)
    assert not raw.exists() and container((tmp_path / "lib.co").read_bytes()) == COMPRESSED_BUNDLE


# --- the reader on hand-made and damaged bundles (format from LLVM's OffloadBundler.cpp) -------------------


def _bundle(entries: list[tuple[str, bytes]], align: int = 4096) -> bytes:
    header = b"__CLANG_OFFLOAD_BUNDLE__" + struct.pack("<Q", len(entries))
    size = len(header) + sum(24 + len(bid) for bid, _ in entries)
    table, body, offset = b"", b"", -(-size // align) * align
    for bid, data in entries:
        table += struct.pack("<QQQ", offset, len(data), len(bid)) + bid.encode()
        body = body.ljust(offset - size, b"\0") + data
        offset = -(-(offset + len(data)) // align) * align
    return header + table + body


def _ccob(inner: bytes, version: int = 2, method: int = 0) -> bytes:
    packed = zlib.compress(inner) if method == 0 else zstandard.ZstdCompressor().compress(inner)
    digest = struct.unpack("<Q", hashlib.md5(inner).digest()[:8])[0]
    if version == 1:
        head = struct.pack("<4sHHIQ", b"CCOB", 1, method, len(inner), digest)
    elif version == 2:
        head = struct.pack("<4sHHIIQ", b"CCOB", 2, method, 24 + len(packed), len(inner), digest)
    else:
        head = struct.pack("<4sHHQQQ", b"CCOB", version, method, 32 + len(packed), len(inner), digest)
    return head + packed


ELF = b"\x7fELF" + bytes(range(256)) * 3
TWO_TARGETS = _bundle([("host-x86_64-unknown-linux-gnu-", b""), ("hipv4-amdgcn-amd-amdhsa--gfx90a:xnack+", b"A" * 9),
                       ("hipv4-amdgcn-amd-amdhsa--gfx942", ELF)])


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("method", [0, 1])
def test_every_header_version_and_method_reads(version, method):
    data = _ccob(TWO_TARGETS, version, method)
    assert read_compressed_header(data).method == ("zlib", "zstd")[method]
    assert code_object_bytes(data, gfx="gfx942") == ELF
    assert code_object_bytes(data, gfx="gfx90a") == b"A" * 9
    # v2/v3 carry their length: whatever follows the bundle (a concatenated one) is not read as its payload
    if version > 1:
        assert code_object_bytes(data + b"trailing", gfx="gfx942") == ELF


def test_plain_elf_and_uncompressed_bundles_pass():
    assert container(ELF) == PLAIN_ELF and code_object_bytes(ELF) is ELF
    assert code_object_bytes(b"garbage") == b"garbage"  # the ELF reader judges what is not a bundle
    assert code_object_bytes(TWO_TARGETS, gfx="gfx942") == ELF


@pytest.mark.parametrize(("damage", "message"), [
    (lambda d: d[:-5], "says it is .* bytes long"),
    (lambda d: d[:12], "header truncated"),
    (lambda d: d[:4] + struct.pack("<H", 9) + d[6:], "version 9 is unknown"),
    (lambda d: d[:6] + struct.pack("<H", 7) + d[8:], "compression method 7"),
    (lambda d: d[:40] + bytes([d[40] ^ 0xFF]) + d[41:], "damaged|does not match|inflates"),  # payload
    (lambda d: d[:16] + struct.pack("<Q", 12345) + d[24:], "inflates to .* its header says 12345"),
    (lambda d: d[:24] + struct.pack("<Q", 12345) + d[32:], "does not match the hash"),
])
def test_damaged_compressed_bundles_are_named(damage, message):
    data = damage(_ccob(TWO_TARGETS, 3, 1))
    with pytest.raises(BundleError, match=message) as exc:
        code_object_bytes(data, "lib.co", "gfx942")
    assert str(exc.value).startswith("lib.co: ")


def test_bundle_without_the_target_lists_what_it_has():
    with pytest.raises(BundleError, match=r"no amdgcn code object for gfx1100 \(entries: host-x86_64"):
        code_object_bytes(TWO_TARGETS, "lib.co", "gfx1100")
    with pytest.raises(BundleError, match="more than one amdgcn code object"):
        code_object_bytes(TWO_TARGETS, "lib.co")
    bad = bytearray(TWO_TARGETS)
    bad[32:40] = struct.pack("<Q", len(TWO_TARGETS) + 1)  # first entry's offset past the end
    with pytest.raises(BundleError, match="outside the bundle"):
        bundle_entries(bytes(bad))
    with pytest.raises(BundleError, match="truncated"):
        bundle_entries(TWO_TARGETS[:40])


def test_read_code_object_names_a_damaged_bundle(tmp_path):
    bad = tmp_path / "lib.co"
    bad.write_bytes(_ccob(TWO_TARGETS, 3, 1)[:-3])
    with pytest.raises(BuildError, match=f"{bad}: compressed offload bundle says"):
        read_code_object(bad)
