"""`tensile-lite build-metadata` and `tensile-lite inspect-dat` end to end on real logic files."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tensile_lite.cli import build_parser, main
from tensile_lite.library import FORMATS, read_dat
from tests.shared import dev_logic_files, shared_dir

GFX908 = [
    "TensileLibrary_lazy_gfx908",
    "TensileLibrary_HH_HH_Bias_SAV_UA_Type_HH_HPA_Contraction_l_Ailk_Bjlk_Cijk_Dijk_gfx908",
    "TensileLibrary_HH_SH_HA_Bias_SAV_UA_Type_HS_HPA_Contraction_l_Ailk_Bljk_Cijk_Dijk_gfx908",
]
SUFFIX = {"msgpack": ".dat", "msgpack-zstd": ".dat", "msgpack-zlib": ".dat.zlib", "msgpack-indexed": ".dat",
          "msgpack-indexed-zlib": ".dat.zlib", "yaml": ".yaml"}


@pytest.fixture(scope="module")
def arcturus() -> Path:
    return shared_dir("logic", "asm_full", "arcturus")


@pytest.mark.parametrize("fmt", FORMATS)
def test_build_metadata_writes_libraries_and_manifest(arcturus: Path, tmp_path: Path, capsys, fmt: str):
    assert main(["build-metadata", str(arcturus), str(tmp_path), "--library-format", fmt]) == 0
    out, err = capsys.readouterr()
    assert "gfx908: 2 placeholder libraries, 3 solutions, 3 kernels" in out
    assert "no kernels were built" in err
    library = tmp_path / "library"
    expected = sorted(n + SUFFIX[fmt] for n in GFX908)
    assert sorted(p.name for p in library.iterdir()) == sorted([*expected, "TensileManifest.txt"])
    manifest = (library / "TensileManifest.txt").read_text().splitlines()
    assert sorted(manifest) == sorted(str((library / n).resolve()) for n in expected)
    master = read_dat(library / (GFX908[0] + SUFFIX[fmt]))
    values = {row["library"]["value"] for op in master["library"]["rows"][0]["library"]["map"].values()
              for perf in op["rows"] for row in perf["library"]["rows"]}
    assert values == set(GFX908[1:])


def test_inspect_dat_reads_an_indexed_library(arcturus: Path, tmp_path: Path, capsys):
    main(["build-metadata", str(arcturus), str(tmp_path / "i"), "--library-format", "msgpack-indexed-zlib"])
    main(["build-metadata", str(arcturus), str(tmp_path / "p"), "--library-format", "msgpack-zlib"])
    capsys.readouterr()
    name = GFX908[2] + ".dat.zlib"
    assert main(["inspect-dat", str(tmp_path / "i" / "library" / name)]) == 0
    out = capsys.readouterr().out
    assert "msgpack-indexed-zlib" in out and "placeholder library" in out
    assert "solutions: 2 (indices 1..2)" in out and "format_version 2: 2 solutions in a " in out
    assert main(["inspect-dat", "--json", str(tmp_path / "i" / "library" / name)]) == 0
    assert json.loads(capsys.readouterr().out) == read_dat(tmp_path / "p" / "library" / name)


def test_inspect_dat_summary_and_json(arcturus: Path, tmp_path: Path, capsys):
    main(["build-metadata", str(arcturus), str(tmp_path), "--library-format", "msgpack-zstd"])
    capsys.readouterr()
    placeholder = tmp_path / "library" / (GFX908[2] + ".dat")
    assert main(["inspect-dat", str(placeholder)]) == 0
    out = capsys.readouterr().out
    assert "msgpack-zstd" in out and "placeholder library" in out
    assert "solutions: 2 (indices 1..2)" in out
    assert "BufferLoadOffsetLimitCheck 2" in out and "TruePred 1" in out
    assert main(["inspect-dat", str(tmp_path / "library" / (GFX908[0] + ".dat"))]) == 0
    out = capsys.readouterr().out
    assert "master library" in out and GFX908[1] in out and GFX908[2] in out
    assert main(["inspect-dat", "--json", str(placeholder)]) == 0
    assert json.loads(capsys.readouterr().out) == read_dat(placeholder)


def test_architecture_and_filter_select_files(arcturus: Path, tmp_path: Path, capsys):
    assert main(["build-metadata", str(arcturus), str(tmp_path), "--architecture", "gfx90a:xnack+_gfx942"]) == 2
    assert "none of the 2 logic files is for gfx90a, gfx942" in capsys.readouterr().err
    assert main(["build-metadata", str(arcturus), str(tmp_path / "one"), "--architecture", "gfx908:xnack-",
                 "--logic-filter", "*HSS*"]) == 0
    assert "gfx908: 1 placeholder libraries, 2 solutions" in capsys.readouterr().out
    assert main(["build-metadata", str(arcturus), str(tmp_path), "--architecture", "sm_90"]) == 2
    assert "not an architecture" in capsys.readouterr().err


def test_bad_logic_file_fails_without_writing(arcturus: Path, tmp_path: Path, capsys):
    logic = tmp_path / "logic"
    shutil.copytree(arcturus, logic)
    victim = next(logic.rglob("*HSS*.yaml"))
    victim.write_text(victim.read_text().replace("DepthU: ", "DepthU: -", 1))
    assert main(["build-metadata", str(logic), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert victim.name in err and "DepthU" in err
    assert not (tmp_path / "out" / "library").exists()


def test_corrupt_dat_is_a_clear_error(tmp_path: Path, capsys):
    bad = tmp_path / "TensileLibrary_lazy_gfx942.dat"
    bad.write_bytes(b"\x28\xb5\x2f\xfd garbage")
    assert main(["inspect-dat", str(bad)]) == 2
    assert "bad zstd frame" in capsys.readouterr().err


def test_help_says_no_kernels_are_built():
    parser = build_parser()
    assert "metadata only: no kernels are built" in " ".join(parser.format_help().split())
    sub = next(a for a in parser._actions if a.dest == "command")
    assert "NO KERNELS are built" in " ".join(sub.choices["build-metadata"].format_help().split())


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """A reader that leaves early (`tensile-lite inspect-dat ... --json | head -1`) ends the command
    with the pipe's exit code and no traceback (the output is far larger than a pipe's buffer)."""
    logic = next(p for p in dev_logic_files() if p.name.startswith("navi31_Cijk_Alik_Bjlk_BBS"))
    subprocess.run([sys.executable, "-m", "tensile_lite", "build-metadata", str(logic), str(tmp_path)], check=True,
                   capture_output=True)
    dat = next(p for p in (tmp_path / "library").glob("*.dat") if "lazy" not in p.name)
    proc = subprocess.Popen([sys.executable, "-m", "tensile_lite", "inspect-dat", str(dat), "--json"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert first.strip() and proc.wait(timeout=120) == 141 and "Traceback" not in err, err
