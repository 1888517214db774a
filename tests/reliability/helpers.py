"""Shared pieces of the reliability suite: fake toolchains, process and leftover checks, tmpfs mounts."""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import tensile_lite.sample

SAMPLE = tensile_lite.sample.path()
MARK_VAR = "TENSILE_LITE_RELIABILITY_MARK"
# The body of a fake tool after `--version` is answered, per failure mode.
_MODES = {
    "fail": 'cat >/dev/null; echo "<stdin>:1:1: error: injected failure" >&2; exit 1',
    "crash": "cat >/dev/null; kill -SEGV $$",
    "hang": "sleep 1000",  # a grandchild: only a process-group kill ends it
    "noobj": "cat >/dev/null; exit 0",
}


def fake_tool(folder: Path, name: str, mode: str, real: Path) -> Path:
    """A shell script posing as clang/ld.lld 22: `--version` answers, everything else does `mode`
    (ok: runs the real tool)."""
    body = f'exec "{real}" "$@"' if mode == "ok" else _MODES[mode]
    path = folder / f"{name}-{mode}"
    path.write_text("#!/bin/sh\n"
                    'case "$1" in --version) echo "clang version 22.1.0 (fake)"; exit 0;; esac\n'
                    f"{body}\n")
    path.chmod(0o755)
    return path


def new_mark() -> str:
    return uuid.uuid4().hex


def marked_processes(mark: str) -> list[int]:
    """PIDs (other than ours) whose environment carries the mark: what a build started and left running."""
    needle = f"{MARK_VAR}={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes():
                status = (entry / "status").read_text()
                if "State:\tZ" not in status:  # a zombie is not running; its parent reaps it
                    found.append(int(entry.name))
    return found


def _describe(pid: int) -> str:
    try:
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        ppid = next(line.split()[1] for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                    if line.startswith("PPid:"))
    except (OSError, StopIteration):
        return f"{pid} (gone)"
    return f"{pid} (parent {ppid}): {cmd[:200]}"


def wait_no_processes(mark: str, seconds: float = 15.0) -> list[str]:
    """The marked processes still alive after up to `seconds`, described (empty when all are gone)."""
    deadline = time.monotonic() + seconds
    while True:
        left = marked_processes(mark)
        if not left or time.monotonic() > deadline:
            return [_describe(pid) for pid in left]
        time.sleep(0.2)


def tcl_argv(logic: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "tensile_lite.tcl", *extra, str(logic), str(out), "HIP"]


def spawn_build(logic: Path, out: Path, tmpdir: Path, mark: str, *extra: str,
                new_session: bool = False) -> subprocess.Popen:
    env = dict(os.environ, TMPDIR=str(tmpdir), **{MARK_VAR: mark})
    return subprocess.Popen(tcl_argv(logic, out, *extra), env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=new_session)


def run_build(logic: Path, out: Path, tmpdir: Path, mark: str, *extra: str,
              timeout: float = 300) -> subprocess.CompletedProcess:
    proc = spawn_build(logic, out, tmpdir, mark, *extra)
    stdout, stderr = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


def leftovers(*folders: Path) -> list[str]:
    """Working folders and temporaries of ours in `folders` (none may survive a finished run)."""
    found = []
    for folder in folders:
        if folder.is_dir():
            found += [str(p) for p in folder.iterdir() if p.name.startswith((".tensile-lite-", "tensile-lite-"))]
    return sorted(found)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "error:" in line and not line.startswith(" ")]


def assert_one_error(stderr: str, *needles: str) -> str:
    """Exactly one `error:` line, no traceback, naming each of `needles`; returns the line."""
    assert "Traceback" not in stderr, stderr
    lines = error_lines(stderr)
    assert len(lines) == 1, stderr
    for needle in needles:
        assert needle in stderr, (needle, stderr)
    return lines[0]


def is_root() -> bool:
    return os.geteuid() == 0


@contextlib.contextmanager
def tmpfs(where: Path, size: str = "64m", read_only: bool = False) -> Iterator[Path]:
    """A tmpfs mounted at `where` for the duration (root only: skips otherwise)."""
    if not is_root():
        pytest.skip("mounting a tmpfs needs root")
    where.mkdir(parents=True, exist_ok=True)
    opts = f"size={size}" + (",ro" if read_only else "")
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", opts, "tmpfs", str(where)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {res.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def remount_read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def copy_logic(files: Sequence[Path], dest: Path, edit=None) -> Path:
    """The logic files in `dest` (flat), each optionally rewritten by `edit(text) -> text`."""
    dest.mkdir(parents=True, exist_ok=True)
    for f in files:
        text = f.read_text()
        (dest / f.name).write_text(edit(text) if edit else text)
    return dest


def gfx942_sample() -> Path:
    return next(SAMPLE.rglob("aquavanjaram_*.yaml"))
