"""Temporaries on another filesystem than the output, stale working folders of killed runs, and the output
lock: builds never depend on where TMPDIR is, and what a killed run left is recognised and removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tensile_lite.codeobj.elf import read_code_object
from tensile_lite.errors import EXIT_OUTPUT, OutputError
from tensile_lite.tcl import main
from tensile_lite.workdirs import locked_folder, move_file, move_tree, private_dir, sweep_stale
from tests.reliability.helpers import SAMPLE, assert_one_error, copy_logic, gfx942_sample, leftovers, tmpfs


def split_k_logic(dest: Path) -> Path:
    """The gfx942 sample with one MultipleBuffer solution at GSU 4: the helper code object then holds the
    conversion kernels and is built through the pipeline (the path that renamed across filesystems)."""
    return copy_logic([gfx942_sample()], dest, lambda t: t.replace("GlobalSplitU: 1\n", "GlobalSplitU: 4\n", 1))


def test_tmpdir_on_another_filesystem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toolchain) -> None:
    logic = split_k_logic(tmp_path / "logic")
    with tmpfs(tmp_path / "tmpfs") as tmp:
        monkeypatch.setenv("TMPDIR", str(tmp))
        monkeypatch.setattr("tempfile.tempdir", None)
        out = tmp_path / "out"
        assert main(["--architecture=gfx942", "--verbose=0", str(logic), str(out), "HIP"]) == 0
        assert list(tmp.iterdir()) == []
    helpers = read_code_object(out / "library" / "Kernels.so-000-gfx942.hsaco")
    assert len(helpers.kernels) > 1


def test_move_file_and_tree_across_filesystems(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "tmpfs", "1m") as other:
        src = other / "a.bin"
        src.write_bytes(b"payload")
        dest = tmp_path / "a.bin"
        move_file(src, dest)
        assert dest.read_bytes() == b"payload" and not src.exists()
        tree = other / "tree"
        (tree / "sub").mkdir(parents=True)
        (tree / "sub" / "f").write_text("x")
        move_tree(tree, tmp_path / "tree")
        assert (tmp_path / "tree" / "sub" / "f").read_text() == "x" and not tree.exists()
        assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


def _owner_that_dies(parent: Path, kind: str) -> Path:
    """A child process creates a working folder and is killed with SIGKILL while holding it."""
    code = ("import sys, time; from pathlib import Path; from tensile_lite.workdirs import private_dir\n"
            f"with private_dir(Path({str(parent)!r}), {kind!r}) as d:\n"
            "    print(d, flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    folder = Path(child.stdout.readline().strip())
    child.send_signal(signal.SIGKILL)
    child.wait()
    return folder


def test_a_live_runs_folder_is_never_swept(tmp_path: Path) -> None:
    code = ("import time; from pathlib import Path; from tensile_lite.workdirs import private_dir\n"
            f"with private_dir(Path({str(tmp_path)!r}), 'tmp') as d:\n"
            "    print(d, flush=True); time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        folder = Path(child.stdout.readline().strip())
        assert sweep_stale(tmp_path) == [] and folder.is_dir()
    finally:
        child.kill()
        child.wait()


def test_stale_folders_of_killed_runs_are_swept(tmp_path: Path) -> None:
    dead = [_owner_that_dies(tmp_path, kind) for kind in ("staging", "tmp", "helpers")]
    assert all(d.is_dir() for d in dead)
    with private_dir(tmp_path, "tmp") as live:
        (tmp_path / ".tensile-lite-tmp-unrelated").mkdir()  # not a name we give: never ours to remove
        assert sorted(sweep_stale(tmp_path)) == sorted(dead)
        assert live.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".tensile-lite-tmp-unrelated"]


def test_a_killed_build_is_cleaned_by_the_next(tmp_path: Path, private_tmp: Path, toolchain) -> None:
    out = tmp_path / "out"
    out.mkdir()
    stale = [_owner_that_dies(out, "staging"), _owner_that_dies(private_tmp, "tmp")]
    assert main(["--architecture=gfx942", "--verbose=0", str(SAMPLE), str(out), "HIP"]) == 0
    assert not any(p.exists() for p in stale)
    assert leftovers(out, private_tmp) == [] and sorted(p.name for p in out.iterdir()) == ["library"]


def test_second_build_refuses_clearly_when_told_not_to_wait(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    with locked_folder(out, 0):
        rc = main(["--architecture=gfx942", "--verbose=0", "--lock-timeout=0", str(SAMPLE), str(out), "HIP"])
        assert rc == EXIT_OUTPUT
        assert_one_error(capsys.readouterr().err, "another TensileCreateLibrary", str(out), "--lock-timeout")
    assert list(out.iterdir()) == []


def test_lock_waits_then_gives_up(tmp_path: Path) -> None:
    notes: list[str] = []
    with locked_folder(tmp_path, 0):
        start = time.monotonic()
        with pytest.raises(OutputError, match=r"waited 0\.5 s"), locked_folder(tmp_path, 0.5, notes.append):
            pass
        assert time.monotonic() - start >= 0.5 and len(notes) == 1
    with locked_folder(tmp_path, 0):  # released: free again
        pass
    assert os.listdir(tmp_path) == []
