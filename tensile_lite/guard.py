"""How every command ends: one `error:` line and a fixed exit code (errors.EXIT_CODES), never a traceback
unless --debug, and cleanup on SIGINT, SIGTERM and SIGHUP as on any other error.

SIGTERM and SIGHUP (what make, ninja, CI runners and `timeout` send) would otherwise end Python without
running a single `finally`, leaving workers, temporaries and staging behind. `SignalGuard` turns the first
of them into a `Stopped` exception in the main thread, so the same cleanup paths as for an error run; later
signals are remembered but do not interrupt that cleanup. The handler's state lives in the guard object;
the only process-level state is the signal disposition itself, restored on exit.
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import threading
import traceback
from collections.abc import Callable
from types import FrameType, TracebackType
from typing import Any

from tensile_lite.errors import EXIT_INTERNAL, EXIT_OUTPUT, EXIT_SIGNAL_BASE, TensileLiteError

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(BaseException):
    """A stop signal arrived. A BaseException, like KeyboardInterrupt, so `except Exception` lets it by."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


class SignalGuard:
    """Within `with SignalGuard() as g:`, the first stop signal raises `Stopped`; `g.received` keeps it."""

    def __init__(self) -> None:
        self.received: int | None = None
        self._armed = False
        self._old: dict[int, Any] = {}

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.received is None:
            self.received = signum
        if self._armed:
            self._armed = False  # once: the cleanup this starts must not be interrupted by a second signal
            raise Stopped(signum)

    def disarm(self) -> None:
        self._armed = False

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._old[sig] = signal.signal(sig, self._handle)
        self._armed = True
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._armed = False
        for sig, old in self._old.items():
            signal.signal(sig, old)


def _os_error_line(exc: OSError) -> str:
    where = exc.filename if exc.filename is not None else ""
    if exc.filename2 is not None:
        where = f"{where} -> {exc.filename2}"
    what = "no space left on device" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
    return f"{where}: {what}" if where else what


def describe_failure(exc: BaseException) -> tuple[str, int]:
    """The one line and the exit code for whatever ended a command."""
    if isinstance(exc, Stopped):
        return f"stopped by {exc.name}; temporary files removed", EXIT_SIGNAL_BASE + exc.signum
    if isinstance(exc, KeyboardInterrupt):
        return "stopped by SIGINT; temporary files removed", EXIT_SIGNAL_BASE + signal.SIGINT
    if isinstance(exc, TensileLiteError):
        return exc.one_line(), exc.exit_code
    if isinstance(exc, OSError):
        return _os_error_line(exc), EXIT_OUTPUT
    if isinstance(exc, MemoryError):
        return "out of memory (lower --jobs, or give the build more memory)", EXIT_OUTPUT
    if isinstance(exc, RecursionError):
        return "input nested too deeply to process", EXIT_INTERNAL
    return (f"internal error: {type(exc).__name__}: {exc} (a bug in tensile-lite; rerun with --debug for the "
            "traceback)", EXIT_INTERNAL)


def run_guarded(body: Callable[[], int], *, prefix: str, debug: bool,
                extra: Callable[[BaseException], int | None] | None = None) -> int:
    """Run `body`; any failure becomes `<prefix>error: <line>` on stderr and its exit code.

    `extra` may claim an exception first (returning its exit code), e.g. a closed pipe on stdout."""
    with SignalGuard() as guard:
        try:
            code = int(body() or 0)
        except SystemExit:
            raise
        except BaseException as exc:  # every way out is reported, signals included
            guard.disarm()
            claimed = extra(exc) if extra is not None else None
            if claimed is not None:
                return claimed
            if debug:
                traceback.print_exc()
            line, code = describe_failure(exc)
            print(f"{prefix}error: {line}", file=sys.stderr, flush=True)
            return code
        guard.disarm()
    if guard.received is not None:  # a signal that came too late to interrupt still decides the exit code
        print(f"{prefix}error: stopped by {signal.Signals(guard.received).name}", file=sys.stderr)
        return EXIT_SIGNAL_BASE + guard.received
    return code


def quiet_broken_pipe(exc: BaseException) -> int | None:
    """The reader of stdout went away (`... | head`): stop quietly, and keep Python from complaining at exit."""
    if not isinstance(exc, BrokenPipeError):
        return None
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141
