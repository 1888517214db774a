"""Fake toolchains that fail, crash, write nothing or hang, and full disks: each build ends with one `error:`
line naming the kernel, the failing kernel's assembly kept where the message says, an earlier library
intact, and no process, staging or temporary left behind."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.errors import EXIT_OUTPUT, EXIT_TOOLCHAIN
from tensile_lite.tcl import main
from tests.reliability.helpers import (
    MARK_VAR,
    SAMPLE,
    assert_one_error,
    digest,
    fake_tool,
    leftovers,
    new_mark,
    tmpfs,
    wait_no_processes,
)

MESSAGES = {"fail": "injected failure", "crash": "SIGSEGV", "noobj": "wrote no object"}


def _build(out: Path, asm: Path, lld: Path, *extra: str) -> int:
    return main(["--architecture=gfx942", "--verbose=0", f"--assembler={asm}", f"--linker={lld}", *extra,
                 str(SAMPLE), str(out), "HIP"])


def _kept_text(err: str) -> Path:
    m = re.search(r"its assembly text is in (\S+\.s)", err)
    assert m, err
    return Path(m.group(1))


@pytest.mark.parametrize("mode", sorted(MESSAGES))
def test_failing_assembler(mode: str, tmp_path: Path, private_tmp: Path, built_sample: Path, toolchain: Toolchain,
                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    shutil.copytree(built_sample, out)
    before = digest(out / "library")
    asm = fake_tool(tmp_path, "clang", mode, toolchain.assembler)
    assert _build(out, asm, toolchain.linker, "--jobs=1") == EXIT_TOOLCHAIN
    err = capsys.readouterr().err
    assert_one_error(err, MESSAGES[mode], "kernel Cijk_")
    kept = _kept_text(err)
    assert kept.parent == out / "failed-kernels" and ".amdhsa_kernel" in kept.read_text()
    assert digest(out / "library") == before
    assert sorted(p.name for p in out.iterdir()) == ["failed-kernels", "library"]
    assert leftovers(private_tmp) == []


def test_failed_kernels_of_an_earlier_run_are_cleared(tmp_path: Path, private_tmp: Path, toolchain: Toolchain,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert _build(out, fake_tool(tmp_path, "clang", "fail", toolchain.assembler), toolchain.linker,
                  "--jobs=1") == EXIT_TOOLCHAIN
    assert (out / "failed-kernels").is_dir()
    assert _build(out, toolchain.assembler, toolchain.linker, "--jobs=1") == 0
    assert sorted(p.name for p in out.iterdir()) == ["library"]


def test_hung_assembler_times_out_and_leaves_no_process(tmp_path: Path, private_tmp: Path, toolchain: Toolchain,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    mark = new_mark()
    monkeypatch.setenv(MARK_VAR, mark)  # workers and tools inherit it: how stray processes are found
    out = tmp_path / "out"
    asm = fake_tool(tmp_path, "clang", "hang", toolchain.assembler)
    assert _build(out, asm, toolchain.linker, "--jobs=2", "--tool-timeout=2") == EXIT_TOOLCHAIN
    err = capsys.readouterr().err
    assert_one_error(err, "did not finish within 2 s", "--tool-timeout", "kernel Cijk_")
    assert _kept_text(err).is_file()
    assert wait_no_processes(mark) == []
    assert leftovers(private_tmp, out) == []


def test_full_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toolchain: Toolchain,
                     capsys: pytest.CaptureFixture[str]) -> None:
    with tmpfs(tmp_path / "tiny", "4k") as tiny:
        monkeypatch.setenv("TMPDIR", str(tiny))
        monkeypatch.setattr("tempfile.tempdir", None)
        rc = _build(tmp_path / "out", toolchain.assembler, toolchain.linker, "--jobs=1")
        err = capsys.readouterr().err
        assert rc == EXIT_OUTPUT, err
        assert_one_error(err, "No space left on device")
        assert list(tiny.iterdir()) == []  # neither our temporaries nor the assembler's own


def test_full_output_disk(tmp_path: Path, private_tmp: Path, toolchain: Toolchain,
                          capsys: pytest.CaptureFixture[str]) -> None:
    with tmpfs(tmp_path / "tiny", "16k") as tiny:
        out = tiny / "out"
        rc = _build(out, toolchain.assembler, toolchain.linker, "--jobs=1")
        err = capsys.readouterr().err
        assert rc == EXIT_OUTPUT, err
        assert_one_error(err)
        assert "space" in err.lower()
        assert leftovers(out, private_tmp) == []
        assert not (out / "library" / "TensileManifest.txt").exists()
