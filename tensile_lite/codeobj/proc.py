"""Running one LLVM tool: its own process group, a time limit, its temporaries in ours, and no orphans.

- Own process group (a new session): a timeout or a stop kills the tool *and* anything it started, and a
  Ctrl-C at the terminal reaches only us, so we decide how the tool ends (never a half-written output we
  did not expect).
- A time limit per call: a hung assembler or linker becomes an error naming what it was working on
  instead of a build that never ends.
- `TMPDIR` points into a folder we remove, so whatever the tool leaves behind (full disk, crash) goes
  with it.
- On Linux the tool gets SIGKILL if the process that started it dies, even by SIGKILL; and a watchdog (one
  small process per tool-running process, started with the first tool) kills the tool's whole group then,
  since what the tool started does not inherit that setting.

Process-level state, kept to two things: the set of running tool groups (a worker's SIGTERM handler must
kill them before the worker exits, and a signal handler has no other way to reach them) and the pipe to
this process's watchdog (its end-of-file is how the watchdog learns that we died).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

import attrs

from tensile_lite.errors import ToolFailure

DEFAULT_TOOL_TIMEOUT = 900.0  # seconds: a large link takes tens of seconds; a hang takes forever
_PR_SET_PDEATHSIG = 1

# Process groups of the tools this process is running right now (see the module docstring).
_RUNNING: set[int] = set()
# The watchdog: reads "+<pgid>"/"-<pgid>" lines; at end of file (we exited or were killed) it kills every
# group still registered. Its own session keeps terminal signals away from it.
_WATCHDOG_CODE = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    try:
        pgid = int(line[1:])
    except ValueError:
        continue
    (groups.add if line[0] == "+" else groups.discard)(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""
_WATCHDOG: list[subprocess.Popen[str]] = []  # at most one, started on first use; a list so no `global` is needed


@attrs.frozen(slots=True)
class ToolRun:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def signal_name(self) -> str | None:
        """The signal that ended the tool, if one did (a crash rather than an error exit)."""
        if self.returncode >= 0:
            return None
        try:
            return signal.Signals(-self.returncode).name
        except ValueError:
            return f"signal {-self.returncode}"

    def describe_exit(self) -> str:
        sig = self.signal_name
        return f"was killed by {sig} (it crashed)" if sig else f"exited with status {self.returncode}"


def _load_prctl() -> Callable[..., int] | None:
    """libc's prctl, resolved once here so the child only calls it (no lookup after fork)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send `sig` to this process when its parent dies (Linux; a no-op elsewhere)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)


# Stop signals are held back while a tool starts and is registered, so a handler that kills the registered
# tools (a worker's) never runs in between and misses the one just started.
_HELD = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP})


def _child_setup(parent: int) -> None:
    """In the tool's process, before exec: signals as usual, and death with the process that started it.
    That process may already be gone (it was killed while we were being forked): then we go too."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, _HELD)
    die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(128 + signal.SIGKILL)


def kill_running_tools() -> None:
    """Kill every tool group this process started and has not reaped (signal handlers call this)."""
    for pgid in list(_RUNNING):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


def _watchdog() -> subprocess.Popen[str] | None:
    if _WATCHDOG and _WATCHDOG[0].poll() is None:
        return _WATCHDOG[0]
    _WATCHDOG.clear()
    try:  # a minimal environment: it must not look like part of the build (nor carry the build's settings)
        dog = subprocess.Popen([sys.executable, "-I", "-S", "-c", _WATCHDOG_CODE], stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                               text=True, bufsize=1, env={"PATH": os.environ.get("PATH", "")})
    except OSError:
        return None  # no watchdog: tools still die with us, only their own children might not
    _WATCHDOG.append(dog)
    return dog


def _tell_watchdog(line: str) -> None:
    dog = _watchdog()
    if dog is not None and dog.stdin is not None:
        with contextlib.suppress(OSError, ValueError):
            dog.stdin.write(line + "\n")


def _start(argv: Sequence[str], input_bytes: bytes | None, tmp_dir: str | os.PathLike[str] | None,
           what: str, unset: Collection[str] = ()) -> subprocess.Popen[bytes]:
    """Start the tool and register its group, with stop signals held back until both are done."""
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD)
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE if input_bytes is not None else subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                preexec_fn=functools.partial(_child_setup, os.getpid()),
                                env=tool_env(tmp_dir, unset))
        _RUNNING.add(proc.pid)
        _tell_watchdog(f"+{proc.pid}")
    except OSError as exc:
        raise ToolFailure(f"{what}: cannot run {argv[0]}: {exc.strerror or exc}") from None
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    return proc


@contextlib.contextmanager
def _tracked(proc: subprocess.Popen[bytes]) -> Iterator[None]:
    try:
        yield
    except BaseException:  # timeout, interrupt, anything: the tool's whole group goes with us
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise
    finally:
        # The leader has exited; anything it left running in its group is ours to end too.
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)
        _RUNNING.discard(proc.pid)
        _tell_watchdog(f"-{proc.pid}")


def tool_env(tmp_dir: str | os.PathLike[str] | None, unset: Collection[str] = ()) -> Mapping[str, str] | None:
    """The environment of a tool: ours, with its temporaries sent to `tmp_dir` when given and the
    variables in `unset` removed."""
    if tmp_dir is None and not unset:
        return None
    env = {k: v for k, v in os.environ.items() if k not in unset}
    if tmp_dir is not None:
        for var in ("TMPDIR", "TMP", "TEMP"):
            env[var] = os.fspath(tmp_dir)
    return env


def run_tool(argv: Sequence[str], *, what: str, input_bytes: bytes | None = None,
             timeout: float | None = DEFAULT_TOOL_TIMEOUT,
             tmp_dir: str | os.PathLike[str] | None = None, unset: Collection[str] = ()) -> ToolRun:
    """Run `argv` to completion; a ToolFailure naming `what` if it cannot start or exceeds `timeout`.
    `unset`: environment variables the tool must not see."""
    proc = _start(argv, input_bytes, tmp_dir, what, unset)
    with _tracked(proc):
        try:
            out, err = proc.communicate(input_bytes, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ToolFailure(f"{what}: {os.path.basename(argv[0])} did not finish within {timeout:g} s and was "
                              "killed (raise the limit with --tool-timeout)") from None
    return ToolRun(proc.returncode, out, err)
