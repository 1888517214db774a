"""Streaming assembly text into any sink, comment-free unless asked, with deterministic labels.

A sink is a list (one string per line is appended), a callable taking text chunks, or a file-like
object with `write` (a pipe to the assembler, a StringIO, an open file). Lines are buffered and
written in chunks, so a kernel never needs to exist as one string.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

from tensile_lite.asm.errors import AsmError
from tensile_lite.asm.isa import Instruction
from tensile_lite.asm.operands import Label

COMMENT_MARKERS = ("//", "/*", ";")


def has_comment_marker(text: str) -> bool:
    return "//" in text or "/*" in text or ";" in text


class AsmWriter:
    """Writes instructions, labels and directives as lines.

    `annotate=True` keeps the comments passed to `emit`/`comment` (for debugging); otherwise they
    are dropped before any string is built, and emitted text contains no comment markers.
    """

    __slots__ = ("_buf", "_chunk", "_to_list", "_write", "annotate", "lines")

    def __init__(self, sink: list[str] | Callable[[str], Any] | Any, *, annotate: bool = False,
                 chunk_lines: int = 4096):
        self.annotate = annotate
        self.lines = 0
        self._buf: list[str] = []
        self._chunk = max(1, chunk_lines)
        self._to_list: list[str] | None = sink if isinstance(sink, list) else None
        if self._to_list is not None:
            self._write: Callable[[str], Any] | None = None
        elif hasattr(sink, "write"):
            self._write = sink.write
        elif callable(sink):
            self._write = sink
        else:
            raise AsmError(f"cannot write assembly to a {type(sink).__name__}; pass a list, a callable "
                           "or an object with write()")

    def emit(self, ins: Instruction, comment: str | None = None) -> None:
        """One instruction (its comment is kept only when annotating)."""
        buf = self._buf
        if comment is not None and self.annotate:
            buf.append(f"{ins.text}  // {comment}")
        else:
            buf.append(ins.text)
        self.lines += 1
        if len(buf) >= self._chunk:
            self.flush()

    def extend(self, instructions: Iterable[Instruction]) -> None:
        """Many instructions at once (the cheapest way to emit)."""
        buf = self._buf
        before = len(buf)
        buf.extend(i.text for i in instructions)
        self.lines += len(buf) - before
        if len(buf) >= self._chunk:
            self.flush()

    def label(self, label: Label) -> None:
        self._line(label.text + ":")

    def directive(self, text: str) -> None:
        """An assembler directive or other raw line; comment markers are refused."""
        if has_comment_marker(text):
            raise AsmError(f"raw assembly line contains a comment marker: {text!r}")
        self._line(text)

    def lines_of(self, texts: Iterable[str]) -> None:
        """Raw lines produced by this package (prologue, epilogue); checked like `directive`."""
        for text in texts:
            self.directive(text)

    def comment(self, text: str) -> None:
        """A comment line when annotating; nothing otherwise."""
        if self.annotate:
            self._line("// " + text.replace("\n", " "))

    def _line(self, text: str) -> None:
        buf = self._buf
        buf.append(text)
        self.lines += 1
        if len(buf) >= self._chunk:
            self.flush()

    def flush(self) -> None:
        buf = self._buf
        if not buf:
            return
        if self._to_list is not None:
            self._to_list.extend(buf)
        else:
            assert self._write is not None
            buf.append("")
            self._write("\n".join(buf))
        buf.clear()

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> AsmWriter:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.flush()


LABEL_PREFIX = "label_"


class Labels:
    """Deterministic unique labels for one kernel: `new("LoopBegin")` gives `label_LoopBegin`, a
    second `new("LoopBegin")` gives `label_LoopBegin_1`, and so on (no random suffixes)."""

    __slots__ = ("_seen", "_used", "prefix")

    def __init__(self, prefix: str = LABEL_PREFIX):
        self.prefix = prefix
        self._seen: dict[str, int] = {}
        self._used: set[str] = set()

    def new(self, name: str) -> Label:
        n = self._seen.get(name, 0)
        while True:
            text = f"{self.prefix}{name}" if n == 0 else f"{self.prefix}{name}_{n}"
            n += 1
            if text not in self._used:
                break
        self._seen[name] = n
        self._used.add(text)
        return Label(text)


def render(instructions: Iterable[Instruction]) -> str:
    """Instructions as one newline-terminated string (for tests and small snippets)."""
    return "".join(i.text + "\n" for i in instructions)
