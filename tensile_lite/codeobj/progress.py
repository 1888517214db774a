"""Build progress: a rewriting line on a terminal, a plain line every so often in a build log."""

from __future__ import annotations

import time
from typing import TextIO


def _clock(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


class Progress:
    """Counts kernels done out of `total` and tells `stream` about it.

    mode: "tty" rewrites one line (at most every `tty_every` s), "plain" prints a full line every
    `plain_every` s so CI logs show life without flooding, "off" prints nothing.
    """

    def __init__(self, total: int, stream: TextIO | None, mode: str, *, plain_every: float = 10.0,
                 tty_every: float = 0.2, label: str = "kernels") -> None:
        if stream is None:
            mode = "off"
        elif mode == "auto":
            mode = "tty" if getattr(stream, "isatty", lambda: False)() else "plain"
        if mode not in ("tty", "plain", "off"):
            raise ValueError(f"progress mode {mode!r} is not auto, tty, plain or off")
        self.total = total
        self.done = 0
        self.mode = mode
        self._stream = stream
        self._label = label
        self._every = tty_every if mode == "tty" else plain_every
        self._start = time.monotonic()
        # A terminal shows the line from the first kernel on; a log waits one interval.
        self._last = self._start - (self._every if mode == "tty" else 0.0)
        self._dirty = False

    def line(self) -> str:
        elapsed = time.monotonic() - self._start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else 0.0
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (f"[{self.done}/{self.total} {self._label}, {pct:.0f}%] {rate:.1f} {self._label}/s, "
                f"elapsed {_clock(elapsed)}, ETA {_clock(eta) if rate > 0 else '?'}")

    def advance(self, n: int = 1) -> None:
        self.done += n
        now = time.monotonic()
        if self.mode != "off" and now - self._last >= self._every:
            self._last = now
            self._emit()

    def _emit(self) -> None:
        assert self._stream is not None
        if self.mode == "tty":
            self._stream.write("\r\x1b[K" + self.line())
            self._dirty = True
        else:
            self._stream.write(self.line() + "\n")
        self._stream.flush()

    def message(self, text: str) -> None:
        """A line of its own that does not garble the terminal's progress line."""
        if self.mode == "off":
            return
        assert self._stream is not None
        if self._dirty:
            self._stream.write("\r\x1b[K")
            self._dirty = False
        self._stream.write(text + "\n")
        self._stream.flush()

    def close(self) -> None:
        """Leave the final count on the terminal, on a line of its own."""
        if self.mode == "tty" and self._stream is not None:
            self._stream.write("\r\x1b[K" + self.line() + "\n")
            self._stream.flush()
            self._dirty = False
