"""OutputPath that cannot be used: one `error:` line naming the path, exit 4, nothing created."""

from __future__ import annotations

from pathlib import Path

import pytest

from tensile_lite.errors import EXIT_OUTPUT
from tensile_lite.tcl import main
from tests.reliability.helpers import SAMPLE, assert_one_error, is_root, remount_read_only, tmpfs


def _build(out: Path, *extra: str) -> int:
    return main(["--architecture=gfx942", "--verbose=0", *extra, str(SAMPLE), str(out), "HIP"])


def test_output_is_an_existing_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.write_text("x")
    assert _build(out) == EXIT_OUTPUT
    assert_one_error(capsys.readouterr().err, str(out), "not a folder")
    assert out.read_text() == "x"


def test_output_under_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    assert _build(blocker / "deeper" / "out") == EXIT_OUTPUT
    assert_one_error(capsys.readouterr().err, str(blocker), "is a file")


def test_library_folder_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "library").write_text("x")
    assert _build(out) == EXIT_OUTPUT
    assert_one_error(capsys.readouterr().err, str(out / "library"))
    assert sorted(p.name for p in out.iterdir()) == ["library"]  # no staging left


@pytest.fixture
def read_only(tmp_path: Path):
    """A read-only folder holding `existing/`: a read-only tmpfs as root (root ignores modes), mode 0555
    otherwise."""
    where = tmp_path / "ro"
    if is_root():
        with tmpfs(where, "1m") as mnt:
            (mnt / "existing").mkdir()
            remount_read_only(mnt)
            yield mnt
        return
    where.mkdir()
    (where / "existing").mkdir()
    for p in (where / "existing", where):
        p.chmod(0o555)
    yield where
    for p in (where, where / "existing"):
        p.chmod(0o755)


def test_output_folder_read_only(read_only: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = read_only / "existing"
    assert _build(out) == EXIT_OUTPUT
    assert_one_error(capsys.readouterr().err, str(out), "not writable")


def test_output_under_a_read_only_folder(read_only: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = read_only / "new" / "out"
    assert _build(out) == EXIT_OUTPUT
    assert_one_error(capsys.readouterr().err, str(out), "cannot create")


def test_debug_shows_the_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    out.write_text("x")
    assert _build(out, "--debug") == EXIT_OUTPUT
    assert "Traceback" in capsys.readouterr().err
