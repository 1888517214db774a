"""Interruption and concurrency (marker `interrupt`, run with -m interrupt): SIGINT/SIGTERM/SIGHUP and
SIGKILL mid-build, hung linkers, two builds into one output, determinism across --jobs and file order.
Each checks for stray processes, leftovers in TMPDIR and OutputPath, and that an earlier library stays."""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.errors import EXIT_SIGNAL_BASE, EXIT_TOOLCHAIN
from tests.reliability.helpers import (
    SAMPLE,
    assert_one_error,
    digest,
    fake_tool,
    leftovers,
    marked_processes,
    new_mark,
    run_build,
    spawn_build,
    tmpfs,
    wait_no_processes,
)
from tests.reliability.test_filesystems import split_k_logic

pytestmark = pytest.mark.interrupt
ARCH = "--architecture=gfx942"


def _wait_for_tool(mark: str, word: bytes = b"sleep", seconds: float = 60.0) -> None:
    """Until a process of the build runs `word` (the hung fake tool): the build is then mid-flight."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for pid in marked_processes(mark):
            try:
                if word in Path(f"/proc/{pid}/cmdline").read_bytes():
                    return
            except OSError:
                continue
        time.sleep(0.1)
    raise AssertionError("the build never reached the hung tool")


def _library_digest(out: Path) -> dict[str, str]:
    return {k: v for k, v in digest(out / "library").items() if k != "TensileManifest.txt"}


@pytest.fixture
def earlier(built_sample: Path, tmp_path: Path) -> Path:
    """An output folder already holding a complete library."""
    out = tmp_path / "out"
    shutil.copytree(built_sample, out)
    return out


@pytest.fixture
def tmpdir_(tmp_path: Path) -> Path:
    tmp = tmp_path / "TMPDIR"
    tmp.mkdir()
    return tmp


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
@pytest.mark.parametrize("jobs", [1, 2])
def test_stop_signal_mid_build_cleans_everything(sig: signal.Signals, jobs: int, earlier: Path, tmpdir_: Path,
                                                  tmp_path: Path, toolchain: Toolchain) -> None:
    before = digest(earlier / "library")
    mark = new_mark()
    asm = fake_tool(tmp_path, "clang", "hang", toolchain.assembler)
    proc = spawn_build(SAMPLE, earlier, tmpdir_, mark, ARCH, f"--jobs={jobs}", f"--assembler={asm}",
                       f"--linker={toolchain.linker}")
    _wait_for_tool(mark)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_SIGNAL_BASE + sig, err
    assert_one_error(err, f"stopped by {sig.name}")
    assert wait_no_processes(mark) == []
    assert leftovers(earlier, tmpdir_) == []
    assert digest(earlier / "library") == before
    assert sorted(p.name for p in earlier.iterdir()) == ["library"]


def test_sigterm_to_the_whole_group_like_timeout(earlier: Path, tmpdir_: Path, tmp_path: Path,
                                                 toolchain: Toolchain) -> None:
    mark = new_mark()
    asm = fake_tool(tmp_path, "clang", "hang", toolchain.assembler)
    proc = spawn_build(SAMPLE, earlier, tmpdir_, mark, ARCH, "--jobs=2", f"--assembler={asm}",
                       f"--linker={toolchain.linker}", new_session=True)
    _wait_for_tool(mark)
    os.killpg(proc.pid, signal.SIGTERM)  # workers get it too, as from `timeout`, make or a CI runner
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == EXIT_SIGNAL_BASE + signal.SIGTERM, err
    assert "Traceback" not in err
    assert wait_no_processes(mark) == []
    assert leftovers(earlier, tmpdir_) == []


@pytest.mark.parametrize("jobs", [1, 2])
def test_sigkill_leaves_no_orphans_and_the_rerun_cleans_up(jobs: int, earlier: Path, tmpdir_: Path,
                                                           tmp_path: Path, toolchain: Toolchain) -> None:
    before = _library_digest(earlier)
    mark = new_mark()
    asm = fake_tool(tmp_path, "clang", "hang", toolchain.assembler)
    proc = spawn_build(SAMPLE, earlier, tmpdir_, mark, ARCH, f"--jobs={jobs}", f"--assembler={asm}",
                       f"--linker={toolchain.linker}")
    _wait_for_tool(mark)
    proc.kill()
    proc.communicate(timeout=60)
    assert wait_no_processes(mark) == []  # workers and the hung tool die with the parent
    assert leftovers(earlier, tmpdir_)  # what a SIGKILL cannot clean ...
    assert _library_digest(earlier) == before
    rerun = run_build(SAMPLE, earlier, tmpdir_, new_mark(), ARCH)
    assert rerun.returncode == 0, rerun.stderr
    assert "left by a build that was killed" in rerun.stderr
    assert leftovers(earlier, tmpdir_) == []  # ... the next run does
    assert _library_digest(earlier) == before


def test_hung_linker_times_out(earlier: Path, tmpdir_: Path, tmp_path: Path, toolchain: Toolchain) -> None:
    before = digest(earlier / "library")
    mark = new_mark()
    lld = fake_tool(tmp_path, "ld.lld", "hang", toolchain.linker)
    res = run_build(SAMPLE, earlier, tmpdir_, mark, ARCH, f"--assembler={toolchain.assembler}", f"--linker={lld}",
                    "--tool-timeout=3")
    assert res.returncode == EXIT_TOOLCHAIN, res.stderr
    assert_one_error(res.stderr, "linking", "did not finish within 3 s")
    assert wait_no_processes(mark) == []
    assert leftovers(earlier, tmpdir_) == []
    assert digest(earlier / "library") == before


def test_two_builds_into_one_output_at_once(built_sample: Path, tmp_path: Path, tmpdir_: Path) -> None:
    out = tmp_path / "shared-out"
    marks = [new_mark(), new_mark()]
    procs = [spawn_build(SAMPLE, out, tmpdir_, m, ARCH) for m in marks]
    results = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], results
    assert sum("another build holds" in err for _, err in results) == 1  # one waited for the other
    assert _library_digest(out) == _library_digest(built_sample)
    assert leftovers(out, tmpdir_) == [] and sorted(p.name for p in out.iterdir()) == ["library"]


def test_bytes_do_not_depend_on_jobs_or_file_order(built_sample: Path, tmp_path: Path, tmpdir_: Path) -> None:
    copy = tmp_path / "logic-reversed"
    for f in sorted(SAMPLE.rglob("*.yaml"), reverse=True):  # created in reverse order, other folder names
        dest = copy / "x" / f.relative_to(SAMPLE)
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(f, dest)
    one = run_build(SAMPLE, tmp_path / "j1", tmpdir_, new_mark(), ARCH, "--jobs=1")
    two = run_build(copy, tmp_path / "j2", tmpdir_, new_mark(), ARCH, "--jobs=2")
    assert one.returncode == two.returncode == 0, (one.stderr, two.stderr)
    assert _library_digest(tmp_path / "j1") == _library_digest(tmp_path / "j2") == _library_digest(built_sample)


def test_output_on_another_filesystem_than_tmpdir(tmp_path: Path, tmpdir_: Path, toolchain: Toolchain) -> None:
    logic = split_k_logic(tmp_path / "logic")
    with tmpfs(tmp_path / "tmpfs") as mnt:
        res = run_build(logic, mnt / "out", tmpdir_, new_mark(), ARCH)
        assert res.returncode == 0, res.stderr
        assert leftovers(mnt / "out", tmpdir_) == []
