"""TensileCreateLibrary end to end: layout, manifest, atomicity, determinism, strictness."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

import tensile_lite.sample
from tensile_lite.library.formats import read_dat
from tensile_lite.tcl import main
from tests.shared import shared_dir

FLAGS = ["--merge-files", "--separate-architectures", "--lazy-library-loading", "--no-short-file-names",
         "--no-library-print-debug", "--code-object-version=default", "--cxx-compiler=amdclang++",
         "--library-format=msgpack", "--build-id=sha1"]


def tcl(logic: Path, out: Path, *extra: str) -> int:
    return main([*FLAGS, *extra, str(logic), str(out), "HIP"])


def digest(library: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(library.iterdir())
            if p.name != "TensileManifest.txt"}


def test_sample_build_layout_and_manifest(tmp_path, toolchain):
    out = tmp_path / "Tensile"
    assert tcl(tensile_lite.sample.path(), out, "--architecture=gfx90a:xnack+_gfx90a:xnack-_gfx942") == 0
    library = out / "library"
    manifest = [Path(line) for line in (library / "TensileManifest.txt").read_text().splitlines()]
    present = sorted(p for p in library.iterdir() if p.name != "TensileManifest.txt")
    assert sorted(manifest) == [p.resolve() for p in present]
    names = {p.name for p in present}
    for arch in ("gfx90a", "gfx942"):
        assert f"TensileLibrary_lazy_{arch}.dat" in names
        assert f"Kernels.so-000-{arch}.hsaco" in names
        master = read_dat(library / f"TensileLibrary_lazy_{arch}.dat")
        assert master["library"]["type"] == "Hardware" and master["solutions"] == []
    # No stray files: nothing but OutputPath/library, no staging left behind.
    assert [p.name for p in out.iterdir()] == ["library"]


def test_hsaco_is_a_real_code_object(tmp_path, toolchain):
    out = tmp_path / "o"
    assert tcl(tensile_lite.sample.path(), out, "--architecture=gfx942") == 0
    readelf = toolchain.tool("llvm-readelf")
    text = subprocess.run([str(readelf), "-h", str(out / "library" / "Kernels.so-000-gfx942.hsaco")],
                          capture_output=True, text=True, check=True).stdout
    assert "AMDGPU" in text and "DYN" in text


def test_byte_identical_across_jobs_and_input_order(tmp_path, toolchain):
    """The bundled sample (two architectures); the dev set's gfx90a files get the same check in
    test_devset_e2e, against its shared build."""
    logic = tensile_lite.sample.path()
    a, b = tmp_path / "a", tmp_path / "b"
    assert tcl(logic, a, "--jobs=1") == 0
    # Same files, copied in reverse order into a differently named tree.
    copy = tmp_path / "logic_copy"
    for f in sorted(logic.rglob("*.yaml"), reverse=True):
        dest = copy / f.relative_to(logic)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
    assert tcl(copy, b, "--jobs=2") == 0
    assert len(digest(a / "library")) > 4
    assert digest(a / "library") == digest(b / "library")


def test_strict_fails_and_leaves_no_library(tmp_path, toolchain, capsys):
    out = tmp_path / "o"
    rc = tcl(shared_dir("logic", "asm_full", "arcturus"), out, "--strict")
    assert rc == 2
    assert "--strict" in capsys.readouterr().err
    assert not (out / "library" / "TensileManifest.txt").exists()
    assert not list(out.glob(".tensile-lite-staging-*"))


def test_bad_logic_fails_cleanly_and_keeps_an_old_library(tmp_path, toolchain, capsys):
    out = tmp_path / "o"
    assert tcl(tensile_lite.sample.path(), out, "--architecture=gfx942") == 0
    before = digest(out / "library")
    logic = tmp_path / "bad"
    shutil.copytree(tensile_lite.sample.path(), logic)
    victim = next(logic.rglob("*SB.yaml"))
    victim.write_text(victim.read_text().replace("DataType: 0", "DataType: 77", 1))
    assert tcl(logic, out, "--architecture=gfx942") == 2
    err = capsys.readouterr().err
    assert "unknown data type" in err and str(victim) in err and "Traceback" not in err
    assert digest(out / "library") == before
    assert not list(out.glob(".tensile-lite-staging-*"))


def test_console_script_runs_from_a_clean_cwd(tmp_path, toolchain):
    out = tmp_path / "Tensile"
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    res = subprocess.run([sys.executable, "-m", "tensile_lite.tcl", *FLAGS, "--architecture=gfx942",
                          str(tensile_lite.sample.path()), str(out), "HIP"], cwd=cwd, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert list(cwd.iterdir()) == []  # upstream drops MatchTable.yaml and build_tmp here; we don't


def test_keep_build_tmp_keeps_sources_and_objects(tmp_path, toolchain):
    out = tmp_path / "o"
    assert tcl(tensile_lite.sample.path(), out, "--architecture=gfx942", "--keep-build-tmp") == 0
    kept = out / "build_tmp"
    assert sorted(p.suffix for p in kept.rglob("*") if p.is_file()) == [".o", ".o", ".s", ".s"]
    assert "//" not in next(kept.rglob("*.s")).read_text()  # comment-free assembly


def test_temporaries_go_to_tmpdir_and_are_removed(tmp_path, toolchain, monkeypatch):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # re-read TMPDIR
    out = tmp_path / "o"
    assert tcl(tensile_lite.sample.path(), out, "--architecture=gfx942") == 0
    assert list(tmp.iterdir()) == []
