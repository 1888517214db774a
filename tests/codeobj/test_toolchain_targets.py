from __future__ import annotations

import logging
from pathlib import Path

import attrs
import pytest

from tensile_lite.codeobj.probe import probe_key, probe_targets, require_targets
from tensile_lite.codeobj.toolchain import Toolchain, find_toolchain
from tensile_lite.errors import ToolchainError, UnknownArchitecture
from tensile_lite.targets import TARGETS, bare_gfx, get_target


def test_table_covers_the_issue_targets_with_their_wave_sizes():
    want = {"gfx908", "gfx90a", "gfx940", "gfx941", "gfx942", "gfx950", "gfx1100", "gfx1101",
            "gfx1102", "gfx1150", "gfx1151", "gfx1200", "gfx1201", "gfx1250"}
    assert set(TARGETS) == want
    for gfx, info in TARGETS.items():
        assert info.wavefront_size == (64 if gfx.startswith("gfx9") else 32)
    assert TARGETS["gfx950"].llvm_min >= 20
    assert TARGETS["gfx1250"].llvm_min >= 22


def test_arch_features_are_stripped_and_unknown_arch_is_named():
    assert bare_gfx("gfx90a:xnack+") == "gfx90a"
    assert bare_gfx("gfx942:sramecc+:xnack-") == "gfx942"
    with pytest.raises(UnknownArchitecture, match="gfx803"):
        get_target("gfx803")


def test_probe_agrees_with_the_table(toolchain, probe_report):
    assert not probe_report.from_cache
    assert set(probe_report.supported()) == {g for g, i in TARGETS.items()
                                             if i.supported_by_llvm(toolchain.version[0])}
    assert probe_report.table_mismatches(toolchain.version[0]) == ()
    assert all(not t.warnings for t in probe_report.targets)


def test_unsupported_target_names_toolchain_version_target_and_fix(toolchain):
    old = attrs.evolve(toolchain, version=(19, 1, 0))
    with pytest.raises(ToolchainError) as err:
        old.check_target("gfx950")
    msg = str(err.value)
    assert "gfx950" in msg and "LLVM 19.1.0" in msg and str(toolchain.assembler) in msg
    assert "LLVM 20+" in msg and "apt-get install" in msg


def test_removed_target_fails_through_the_probe(toolchain, probe_report):
    if toolchain.version[0] <= 20:
        pytest.skip("this LLVM still has gfx940")
    with pytest.raises(ToolchainError, match=r"cannot assemble gfx940.*LLVM 16\.\.20"):
        require_targets(toolchain, ["gfx940"], report=probe_report)
    assert require_targets(toolchain, ["gfx942:xnack+"], report=probe_report)[0].gfx == "gfx942"


def _wrapper(tmp_path: Path, toolchain: Toolchain, name: str, extra: str = "") -> Toolchain:
    """A shell wrapper around the real clang: a different binary, as far as the cache can tell."""
    script = tmp_path / name
    script.write_text(f'#!/bin/sh\n{extra}\nexec "{toolchain.assembler}" "$@"\n')
    script.chmod(0o755)
    return find_toolchain(assembler=str(script), linker=str(toolchain.linker), env={})


def test_cache_is_reused_and_invalidated_when_the_toolchain_changes(toolchain, tmp_path):
    cache = tmp_path / "cache"
    tc = _wrapper(tmp_path, toolchain, "clang-wrap")
    first = probe_targets(tc, cache=cache)
    again = probe_targets(tc, cache=cache)
    assert not first.from_cache and again.from_cache
    assert again.targets == first.targets
    # Same path, same version, different content: the old entry must not answer.
    script = Path(tc.assembler)
    script.write_text(script.read_text() + "# rebuilt\n")
    assert probe_key(tc) != first.key
    changed = probe_targets(tc, cache=cache)
    assert not changed.from_cache
    assert len(list(cache.glob("*.json"))) == 2


def test_corrupt_cache_entry_is_not_trusted(toolchain, tmp_path):
    cache = tmp_path / "cache"
    tc = _wrapper(tmp_path, toolchain, "clang-wrap")
    first = probe_targets(tc, cache=cache)
    entry = cache / f"{first.key}.json"
    entry.write_text(entry.read_text()[:-20])  # truncated, as after a crash mid-write
    again = probe_targets(tc, cache=cache)
    assert not again.from_cache and again.targets == first.targets


def test_cache_location_follows_xdg(monkeypatch, tmp_path):
    from tensile_lite.codeobj.probe import cache_dir

    assert cache_dir({"XDG_CACHE_HOME": str(tmp_path)}) == tmp_path / "tensile-lite" / "toolchain-probe"
    assert cache_dir({"HOME": "/h"}) == Path("/h/.cache/tensile-lite/toolchain-probe")


def test_probe_warning_is_reported_not_silent(toolchain, tmp_path, caplog):
    tc = _wrapper(tmp_path, toolchain, "clang-noisy",
                  extra='echo "<stdin>:1:1: warning: pretend deprecation" >&2')
    with caplog.at_level(logging.WARNING):
        report = probe_targets(tc, cache=tmp_path / "cache")
    noisy = [t for t in report.targets if t.warnings]
    assert noisy and all("pretend deprecation" in w for t in noisy for w in t.warnings)
    assert "pretend deprecation" in caplog.text
    # A cached result with warnings reports them again rather than forgetting them.
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert probe_targets(tc, cache=tmp_path / "cache").from_cache
    assert "pretend deprecation" in caplog.text


def test_fingerprint_depends_on_binary_content(toolchain, tmp_path):
    a = _wrapper(tmp_path, toolchain, "clang-a")
    b = _wrapper(tmp_path, toolchain, "clang-b", extra=": different content")
    assert a.fingerprint() == a.fingerprint()
    assert a.fingerprint() != b.fingerprint() != toolchain.fingerprint()
