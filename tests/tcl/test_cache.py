"""The kernel cache and sharded builds, end to end on the bundled sample with the real assembler: a warm cache
and a merge of shards give the single cold build's library byte for byte; what the cache did is read from
the build's own log line, never from a mock."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import tensile_lite.sample
from tensile_lite.cli import main as cli
from tensile_lite.codeobj.cache import FORMAT
from tensile_lite.shard import MANIFEST, assign
from tensile_lite.tcl_args import build_parser, to_request
from tests.tcl.test_build import tcl

ARCHS = "--architecture=gfx90a_gfx942"
SAMPLE_KERNELS = 4  # two per architecture
_TALLY = re.compile(r"kernel cache \S+: (\d+) of (\d+) kernel objects from the cache, (\d+) assembled; "
                    r"(\d+) of (\d+) helper objects from the cache")
_ROOT = Path(__file__).resolve().parents[2]


def library_bytes(out: Path) -> dict[str, str]:
    """Every library file's digest; the manifest's lines by file name (it holds absolute paths)."""
    lib = out / "library"
    found = {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in lib.iterdir() if p.name != "TensileManifest.txt"}
    found["manifest"] = " ".join(Path(line).name for line in (lib / "TensileManifest.txt").read_text().splitlines())
    return found


def tally(err: str) -> tuple[int, int, int]:
    """(from the cache, objects, assembled) of the build's kernel cache line (the library kernels)."""
    m = _TALLY.findall(err)
    assert len(m) == 1, err
    return int(m[0][0]), int(m[0][1]), int(m[0][2])


def helpers(err: str) -> tuple[int, int]:
    """(from the cache, objects) of the helper code objects' kernels (the conversion kernels every sample
    kernel may need: it takes the runtime's GSU)."""
    (m,) = _TALLY.findall(err)
    return int(m[3]), int(m[4])


def entries(cache: Path) -> list[Path]:
    return sorted((cache / f"v{FORMAT}").glob("??/*.o"))


def test_warm_cache_is_byte_identical_and_skips_the_assembler(tmp_path, toolchain, capsys):
    logic, cache = tensile_lite.sample.path(), tmp_path / "cache"
    assert tcl(logic, tmp_path / "plain", ARCHS) == 0
    capsys.readouterr()
    assert tcl(logic, tmp_path / "cold", ARCHS, f"--cache-dir={cache}") == 0
    err = capsys.readouterr().err
    assert tally(err) == (0, SAMPLE_KERNELS, SAMPLE_KERNELS)
    cached, helper_objects = helpers(err)
    assert cached == 0 and helper_objects > 0
    assert len(entries(cache)) == SAMPLE_KERNELS + helper_objects
    assert tcl(logic, tmp_path / "warm", ARCHS, f"--cache-dir={cache}") == 0
    err = capsys.readouterr().err
    assert tally(err) == (SAMPLE_KERNELS, SAMPLE_KERNELS, 0) and helpers(err) == (helper_objects, helper_objects)
    assert library_bytes(tmp_path / "warm") == library_bytes(tmp_path / "cold") == library_bytes(tmp_path / "plain")


def test_the_environment_variable_turns_the_cache_on_and_no_cache_off(monkeypatch, tmp_path):
    monkeypatch.setenv("TENSILE_LITE_CACHE_DIR", str(tmp_path))
    parse = build_parser().parse_args
    assert to_request(parse(["L", "O", "HIP"])).cache_dir == str(tmp_path)
    assert to_request(parse(["L", "O", "HIP", "--cache-dir=/x"])).cache_dir == "/x"
    assert to_request(parse(["L", "O", "HIP", "--no-cache"])).cache_dir is None
    assert to_request(parse(["L", "O", "HIP", "--cache-max-size=3M"])).cache_max_size == 3 * 2**20
    monkeypatch.delenv("TENSILE_LITE_CACHE_DIR")
    assert to_request(parse(["L", "O", "HIP"])).cache_dir is None


def test_corrupt_entries_are_rebuilt_never_linked(tmp_path, toolchain, capsys):
    logic, cache = tensile_lite.sample.path(), tmp_path / "cache"
    assert tcl(logic, tmp_path / "cold", ARCHS, f"--cache-dir={cache}") == 0
    flipped, cut = entries(cache)[:2]
    blob = bytearray(flipped.read_bytes())
    blob[-100] ^= 0x40  # one bit of the object's bytes
    flipped.write_bytes(bytes(blob))
    cut.write_bytes(cut.read_bytes()[:-10])
    capsys.readouterr()
    assert tcl(logic, tmp_path / "again", ARCHS, f"--cache-dir={cache}", "--verbose=2") == 0
    err = capsys.readouterr().err
    # the two bad entries are rebuilt, whether library kernels' or helpers'
    (cached, objects, _), (helpers_cached, helper_objects) = tally(err), helpers(err)
    assert objects == SAMPLE_KERNELS and cached + helpers_cached == objects + helper_objects - 2
    assert "checksum mismatch" in err and "truncated" in err and str(flipped) in err
    assert library_bytes(tmp_path / "again") == library_bytes(tmp_path / "cold")
    # rebuilt entries replace the bad ones: the next build takes every kernel from the cache
    assert tcl(logic, tmp_path / "third", ARCHS, f"--cache-dir={cache}") == 0
    assert tally(capsys.readouterr().err) == (SAMPLE_KERNELS, SAMPLE_KERNELS, 0)


def test_least_recently_used_entries_are_evicted_to_the_limit(tmp_path, toolchain, capsys):
    logic, cache = tensile_lite.sample.path(), tmp_path / "cache"
    assert tcl(logic, tmp_path / "cold", ARCHS, f"--cache-dir={cache}") == 0
    everything = entries(cache)
    for path in everything:  # all long unused
        os.utime(path, (1_000_000, 1_000_000))
    # a gfx942 build uses (and so touches) its two kernels and its helpers; a limit that holds exactly those
    # evicts the others
    capsys.readouterr()
    assert tcl(logic, tmp_path / "942", "--architecture=gfx942", f"--cache-dir={cache}") == 0
    err = capsys.readouterr().err
    cached, helper_objects = helpers(err)
    assert tally(err) == (2, 2, 0) and cached == helper_objects
    used = [p for p in everything if p.stat().st_mtime > 1_000_000]
    assert len(used) == 2 + helper_objects < len(everything)
    limit = sum(p.stat().st_size for p in used)
    assert tcl(logic, tmp_path / "942b", "--architecture=gfx942", f"--cache-dir={cache}",
               f"--cache-max-size={limit}") == 0
    assert entries(cache) == sorted(used)
    assert tcl(logic, tmp_path / "none", "--architecture=gfx942", f"--cache-dir={cache}", "--cache-max-size=0") == 0
    assert entries(cache) == []


def test_two_concurrent_builds_share_one_cache(tmp_path, toolchain, capsys):
    logic, cache = tensile_lite.sample.path(), tmp_path / "cache"
    argv = [sys.executable, "-m", "tensile_lite.tcl", ARCHS, f"--cache-dir={cache}", "--jobs=1", str(logic)]
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    procs = [subprocess.Popen([*argv, str(tmp_path / name), "HIP"], env=env, stderr=subprocess.PIPE, text=True)
             for name in ("a", "b")]
    for p in procs:
        _, err = p.communicate(timeout=600)
        assert p.returncode == 0, err
        assert tally(err)[1] == SAMPLE_KERNELS
    assert library_bytes(tmp_path / "a") == library_bytes(tmp_path / "b")
    assert len(entries(cache)) == SAMPLE_KERNELS + helpers(err)[1]
    assert not list((cache / f"v{FORMAT}").glob("??/.tmp-*"))  # no temporary left behind
    assert tcl(logic, tmp_path / "c", ARCHS, f"--cache-dir={cache}") == 0
    assert tally(capsys.readouterr().err) == (SAMPLE_KERNELS, SAMPLE_KERNELS, 0)
    assert library_bytes(tmp_path / "c") == library_bytes(tmp_path / "a")


def test_shards_merged_equal_one_build(tmp_path, toolchain, capfd):
    logic = tensile_lite.sample.path()
    assert tcl(logic, tmp_path / "one", ARCHS) == 0
    shards = [tmp_path / f"shard{i}" for i in (1, 2, 3)]
    for i, folder in enumerate(shards, 1):
        assert tcl(logic, folder, ARCHS, f"--shard={i}/3", f"--jobs={i % 2 + 1}") == 0
        assert (folder / MANIFEST).is_file() and not (folder / "library").exists()
    capfd.readouterr()
    # in any order; the shards' objects are the only kernel objects: nothing is assembled again
    assert cli(["merge", *map(str, reversed(shards)), str(tmp_path / "merged")]) == 0
    assert f"merge: {SAMPLE_KERNELS} of {SAMPLE_KERNELS} kernel objects from 3 shard(s), 0 assembled" \
        in capfd.readouterr().err
    assert library_bytes(tmp_path / "merged") == library_bytes(tmp_path / "one")


def test_merge_names_what_is_missing_or_mismatched(tmp_path, toolchain, capsys):
    logic = tensile_lite.sample.path()
    for i in (1, 3):
        assert tcl(logic, tmp_path / f"s{i}", ARCHS, f"--shard={i}/3") == 0
    capsys.readouterr()
    assert cli(["merge", str(tmp_path / "s1"), str(tmp_path / "s3"), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "shard(s) 2/3 missing" in err
    assert not (tmp_path / "out" / "library").exists()
    (tmp_path / "s2").mkdir()  # a shard whose build never finished
    assert cli(["merge", *(str(tmp_path / f"s{i}") for i in (1, 2, 3)), str(tmp_path / "out")]) == 2
    assert f"{tmp_path / 's2'} is not a finished shard" in capsys.readouterr().err
    assert tcl(logic, tmp_path / "s2", ARCHS, "--shard=2/3", "--library-format=yaml") == 0
    capsys.readouterr()
    assert cli(["merge", *(str(tmp_path / f"s{i}") for i in (1, 2, 3)), str(tmp_path / "out")]) == 2
    assert "built from different inputs" in capsys.readouterr().err
    # the complete set, merged against a logic tree whose bytes changed since the shards were built
    assert tcl(logic, tmp_path / "s2", ARCHS, "--shard=2/3") == 0
    changed = tmp_path / "logic"
    shutil.copytree(logic, changed)
    first = sorted(changed.rglob("*.yaml"))[0]
    first.write_text(first.read_text() + "\n# edited\n")
    capsys.readouterr()
    shards = [str(tmp_path / f"s{i}") for i in (1, 2, 3)]
    assert cli(["merge", *shards, str(tmp_path / "out"), f"--logic-path={changed}"]) == 2
    assert "differ from those the shards were built from" in capsys.readouterr().err
    assert cli(["merge", *shards, str(tmp_path / "out")]) == 0


def test_the_partition_depends_only_on_the_kernels():
    costs = [((arch, f"k{i:03d}"), (i * 7919) % 101 + 1) for arch in ("gfx90a", "gfx942") for i in range(60)]
    one = assign(costs, 4)
    assert assign(list(reversed(costs)), 4) == one
    assert sorted(set(one.values())) == [1, 2, 3, 4]
    loads = [sum(c for kid, c in costs if one[kid] == s) for s in (1, 2, 3, 4)]
    assert max(loads) - min(loads) <= max(c for _, c in costs)  # greedy by cost: within one kernel's cost


@pytest.mark.parametrize("bad", ["0/3", "4/3", "x", "1/0"])
def test_bad_shard_spec_is_a_usage_error(bad, capsys):
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args(["L", "O", "HIP", f"--shard={bad}"])
    assert exc.value.code == 2
    assert "expected i/N" in capsys.readouterr().err


@pytest.mark.skipif(shutil.which("make") is None, reason="GNU make is not installed")
def test_the_readme_makefile_recipe_builds_the_library(tmp_path, toolchain):
    """The README's `make -j` recipe, run as written (the commands through this interpreter)."""
    readme = (_ROOT / "README.md").read_text()
    recipe = readme.split("```make\n", 1)[1].split("```", 1)[0]
    (tmp_path / "Makefile").write_text(recipe)
    logic = tensile_lite.sample.path()
    py = sys.executable
    env = {**os.environ, "PYTHONPATH": str(_ROOT)}
    done = subprocess.run(["make", "-j2", "-C", str(tmp_path), "N=3", f"TCL={py} -m tensile_lite.tcl",
                           f"MERGE={py} -m tensile_lite merge", f"LOGIC={logic}", f"FLAGS={ARCHS}"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in (tmp_path / "shards").iterdir()) == ["1", "2", "3"]
    assert tcl(logic, tmp_path / "one", ARCHS) == 0
    assert library_bytes(tmp_path / "build" / "Tensile") == library_bytes(tmp_path / "one")
