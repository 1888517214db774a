"""Bad input of every kind: usage errors, unknown architectures, hostile YAML, absurd --jobs. Each is one
`error:` line naming the flag or file, a documented exit code, and no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tensile_lite.cli import main as cli_main
from tensile_lite.codeobj.pipeline import available_cores, usable_jobs
from tensile_lite.errors import EXIT_CODES, EXIT_INPUT, EXIT_INTERNAL
from tensile_lite.guard import run_guarded
from tensile_lite.logic.stream import MAX_DEPTH, MAX_SCALAR
from tensile_lite.tcl import main
from tests.reliability.helpers import SAMPLE, assert_one_error, copy_logic, gfx942_sample

# name -> file content; each must be refused with a reason naming the file
HOSTILE_YAML: dict[str, bytes] = {
    "deep_lists": b"[" * (MAX_DEPTH * 40) + b"]" * (MAX_DEPTH * 40),
    "deep_maps": "".join(" " * i + "k:\n" for i in range(MAX_DEPTH * 3)).encode() + b" " * MAX_DEPTH * 3 + b"v: 1\n",
    "billion_laughs": b'a: &a ["lol","lol","lol"]\nb: &b [*a,*a,*a]\nc: &c [*b,*b,*b]\nd: [*c,*c,*c]\n',
    "huge_scalar": b"- " + b"x" * (MAX_SCALAR + 1) + b"\n",
    "not_utf8": b"- MinimumRequiredVersion: \xc3\x28\x80\n",
    "binary": bytes(range(256)) * 4,
}
REASONS = {"deep_lists": "nested more than", "deep_maps": "nested more than", "billion_laughs": "anchors",
           "huge_scalar": "scalar of", "not_utf8": "not UTF-8", "binary": "not "}


def _tcl(*args: str) -> int:
    return main(["--verbose=0", *args])


def test_usage_errors_exit_2_with_one_line() -> None:
    for argv in (["--jobs", "many", "a", "b", "HIP"], ["--tool-timeout", "-3", "a", "b", "HIP"], ["a", "b", "CUDA"],
                 ["a"]):
        res = subprocess.run([sys.executable, "-m", "tensile_lite.tcl", *argv], capture_output=True, text=True)
        assert res.returncode == EXIT_INPUT, (argv, res.stderr)
        assert_one_error(res.stderr, "TensileCreateLibrary: error:")


def test_exit_codes_are_in_both_helps(capsys: pytest.CaptureFixture[str]) -> None:
    for entry in (lambda: main(["--help"]), lambda: cli_main(["--help"]), lambda: cli_main(["inspect-dat", "--help"])):
        with pytest.raises(SystemExit):
            entry()
        text = capsys.readouterr().out
        assert "exit codes:" in text and all(code in text for code, _ in EXIT_CODES)


def test_unknown_architecture_flag_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for arch in ("gfx123", "gfx942_gfx9999", "sm_90"):
        assert _tcl(f"--architecture={arch}", str(SAMPLE), str(tmp_path / "o"), "HIP") == EXIT_INPUT
        assert_one_error(capsys.readouterr().err, "--architecture")
    assert not (tmp_path / "o" / "library").exists()  # never an empty library that looks like success


def test_unknown_architecture_in_a_logic_file_names_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logic = copy_logic([gfx942_sample()], tmp_path / "logic", lambda t: t.replace("gfx942", "gfx9a9"))
    assert _tcl(str(logic), str(tmp_path / "o"), "HIP") == EXIT_INPUT
    assert_one_error(capsys.readouterr().err, str(next(logic.iterdir())), "gfx9a9")


@pytest.mark.parametrize("name", sorted(HOSTILE_YAML))
def test_hostile_logic_is_refused_by_every_reader(name: str, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "logic" / f"{name}.yaml"
    bad.parent.mkdir()
    bad.write_bytes(HOSTILE_YAML[name])
    assert _tcl(str(bad.parent), str(tmp_path / "o"), "HIP") == EXIT_INPUT
    assert_one_error(capsys.readouterr().err, str(bad), REASONS[name])
    for command in ("inspect-logic", "coverage"):
        assert cli_main([command, str(bad)]) == EXIT_INPUT
        err = capsys.readouterr().err
        assert "Traceback" not in err and str(bad) in err and REASONS[name] in err


def test_jobs_are_capped_to_cores_and_memory() -> None:
    jobs, note = usable_jobs(1000)
    assert jobs <= available_cores() and note is not None and "--jobs 1000 lowered" in note
    assert usable_jobs(1) == (1, None)


def test_jobs_1000_builds_with_a_note(tmp_path: Path, capsys: pytest.CaptureFixture[str], toolchain) -> None:
    assert main(["--jobs=1000", "--architecture=gfx942", str(SAMPLE), str(tmp_path / "o"), "HIP"]) == 0
    assert "--jobs 1000 lowered to" in capsys.readouterr().err


def test_an_unexpected_exception_is_an_internal_error_line(capsys: pytest.CaptureFixture[str]) -> None:
    def boom() -> int:
        raise TypeError("surprise")

    assert run_guarded(boom, prefix="x: ", debug=False) == EXIT_INTERNAL
    assert_one_error(capsys.readouterr().err, "internal error", "TypeError", "--debug")
