"""What one worker process does for one kernel: render its text, assemble it from stdin.

A task carries only the kernel's compact frozen description and a few paths; nothing global is
shipped. The text lives in the worker's memory for the length of one assembler run.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import re
import signal
from pathlib import Path
from types import FrameType
from typing import Any, Protocol, runtime_checkable

import attrs

from tensile_lite.codeobj.assemble import assemble, assemble_argv
from tensile_lite.codeobj.cache import KernelCache
from tensile_lite.codeobj.proc import DEFAULT_TOOL_TIMEOUT, die_with_parent, kill_running_tools
from tensile_lite.codeobj.toolchain import Toolchain
from tensile_lite.errors import DiskFull, TensileLiteError, ToolFailure

# Kernel names can exceed a file-name limit (255 bytes); like upstream we shorten long ones, but with
# a hash of the whole name so two long names sharing a prefix never collide.
_MAX_FILE_BASE = 96
_SAFE = re.compile(r"[^A-Za-z0-9_.\-]")


@runtime_checkable
class KernelSource(Protocol):
    """What the pipeline needs of a kernel. Implementations are frozen and picklable, and
    `assembly_text()` is a pure function of the object (it runs in a worker process).

    A source may also have `cache_identity() -> bytes | None`: bytes that, with the tensile-lite code,
    determine its text exactly, so the kernel cache can be consulted before the text is rendered (cache.py).
    Without it (or when it returns None) the cache is keyed by the text. And it may have
    `text_facts(text) -> Mapping[str, int]`: figures its own text gives of the kernel (the library writes
    some of them), carried with its object through the pipeline and the cache."""

    @property
    def name(self) -> str: ...

    @property
    def arch(self) -> str: ...

    def assembly_text(self) -> str: ...


def file_base(name: str) -> str:
    """A file-system-safe, unique stem for a kernel's `.s`/`.o`."""
    safe = _SAFE.sub("_", name)
    if safe == name and len(name) <= _MAX_FILE_BASE:
        return name
    digest = base64.b32encode(hashlib.sha256(name.encode()).digest()).decode().rstrip("=").lower()
    return f"{safe[:_MAX_FILE_BASE - 33]}-{digest[:32]}"


@attrs.frozen(slots=True)
class AssembleTask:
    source: KernelSource
    toolchain: Toolchain
    obj_dir: Path
    failed_dir: Path
    code_object_version: int
    keep_text: bool
    timeout: float | None = DEFAULT_TOOL_TIMEOUT
    cache: KernelCache | None = None  # where objects are looked up first and stored after assembling
    assemble_missing: bool = True  # False (a merge): an object the cache lacks is an error, not assembled


@attrs.frozen(slots=True)
class AssembleResult:
    name: str
    arch: str
    object_path: Path | None
    object_bytes: int = 0
    text_bytes_kept: int = 0
    error: str | None = None
    failed_text: Path | None = None
    # "tool": the assembler failed, crashed or hung; "disk": it found the disk full; "build": our own code
    failure: str = "build"
    cached: bool = False  # the object came from the kernel cache: no text rendered (if keyed by identity), no assembler
    cache_note: str | None = None  # a corrupt entry found (and removed) on the way
    facts: tuple[tuple[str, int], ...] = ()  # KernelSource.text_facts, sorted (from the cache on a hit)


# The one piece of per-process state a worker holds: the semaphore bounding concurrent LLVM tool
# processes (assemblers here, links in the parent) to `jobs`. Multiprocessing semaphores can only be
# shared by inheritance, so the pool initializer hands it over once instead of each task carrying it.
_tool_slots: Any = None


def _stop(signum: int, _frame: FrameType | None) -> None:
    """SIGTERM/SIGHUP in a worker: the assembler it runs (its own process group) goes first, then the worker.
    `os._exit`, because the pool would catch an exception and carry on with the next task."""
    kill_running_tools()
    os._exit(128 + signum)


def init_worker(tool_slots: Any, parent_pid: int | None = None) -> None:
    """Pool initializer. Ctrl-C is the parent's to handle, so workers ignore it and are stopped by
    the parent instead of each printing a traceback. A worker is told when its parent dies (even by
    SIGKILL) and then stops with its assembler, so a killed build leaves no processes behind."""
    global _tool_slots
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGHUP, _stop)
    die_with_parent(signal.SIGTERM)
    if parent_pid is not None and os.getppid() != parent_pid:  # the parent died before we asked
        os._exit(128 + signal.SIGTERM)
    _tool_slots = tool_slots


def run_pooled_task(task: AssembleTask) -> AssembleResult:
    return run_task(task, _tool_slots)


def run_task(task: AssembleTask, tool_slots: Any = None) -> AssembleResult:
    """Render and assemble one kernel (or take its object from the cache); failures come back as a result
    naming the kernel, not raised, so the parent decides how to stop. `tool_slots` (a semaphore) is held
    only while clang runs."""
    src = task.source
    base = file_base(src.name)
    obj = task.obj_dir / f"{base}.o"
    cache, key = task.cache, None
    notes: list[str] = []
    wave = getattr(src, "wavefront_size", None)
    wave64 = None if wave is None else wave == 64
    flags = assemble_argv(task.toolchain, src.arch, Path("-"), code_object_version=task.code_object_version,
                          wave64=wave64)[1:]
    if cache is not None:
        identity = getattr(src, "cache_identity", None)
        content = identity() if callable(identity) else None
        if content is not None:
            key = cache.key(flags, "source", content)
            hit = _fetch(cache, key, obj, src, notes)
            if hit is not None:
                return hit
    try:
        text = src.assembly_text()
    except Exception as exc:  # any generator bug becomes this kernel's build error, named
        return AssembleResult(src.name, src.arch, None,
                              error=f"generating its assembly text failed: {type(exc).__name__}: {exc}")
    try:
        facts = _text_facts(src, text)
    except Exception as exc:
        return AssembleResult(src.name, src.arch, None,
                              error=f"reading facts from its assembly text failed: {type(exc).__name__}: {exc}")
    if cache is not None and key is None:
        key = cache.key(flags, "text", text.encode())
        hit = _fetch(cache, key, obj, src, notes)
        if hit is not None:
            return hit
    note = "; ".join(notes) or None
    if not task.assemble_missing:
        return AssembleResult(src.name, src.arch, None, error="its object is in none of the shards merged "
                              "(the shards do not cover this build's kernels)", cache_note=note)
    kept = 0
    if task.keep_text:
        (task.obj_dir / f"{base}.s").write_text(text)
        kept = len(text.encode())
    try:
        with tool_slots if tool_slots is not None else contextlib.nullcontext():
            assemble(task.toolchain, text, src.arch, obj, code_object_version=task.code_object_version,
                     wave64=wave64, timeout=task.timeout)
    except TensileLiteError as exc:
        failed, why = _keep_failed_text(task.failed_dir, base, text)
        return AssembleResult(src.name, src.arch, None, text_bytes_kept=kept, error=exc.message + why,
                              failed_text=failed, failure=_failure_kind(exc), cache_note=note)
    if cache is not None and key is not None:
        try:
            cache.store(key, obj, facts)
        except OSError as exc:  # a cache that cannot be written costs speed, not the build
            note = "; ".join([*notes, f"cannot store in the kernel cache {cache.root}: {exc.strerror or exc}"])
    return AssembleResult(src.name, src.arch, obj, obj.stat().st_size, kept, cache_note=note, facts=facts)


def _text_facts(src: KernelSource, text: str) -> tuple[tuple[str, int], ...]:
    read = getattr(src, "text_facts", None)
    return tuple(sorted((str(k), int(v)) for k, v in read(text).items())) if callable(read) else ()


def _fetch(cache: KernelCache, key: str, obj: Path, src: KernelSource, notes: list[str]) -> AssembleResult | None:
    """The result of a cache hit, or None (a corrupt entry found on the way is noted in `notes`)."""
    try:
        got = cache.fetch(key, obj)
    except OSError as exc:
        notes.append(f"cannot read the kernel cache {cache.root}: {exc.strerror or exc}")
        return None
    if got.corrupt:
        notes.append(got.corrupt)
    if not got.hit:
        return None
    return AssembleResult(src.name, src.arch, obj, obj.stat().st_size, cached=True,
                          cache_note="; ".join(notes) or None, facts=got.facts)


def _failure_kind(exc: TensileLiteError) -> str:
    if isinstance(exc, DiskFull):
        return "disk"
    return "tool" if isinstance(exc, ToolFailure) else "build"


def _keep_failed_text(failed_dir: Path, base: str, text: str) -> tuple[Path | None, str]:
    """Write a failed kernel's assembly where the error message will point; on a full disk say so instead."""
    failed = failed_dir / f"{base}.s"
    try:
        failed_dir.mkdir(parents=True, exist_ok=True)
        failed.write_text(text)
    except OSError as exc:
        with contextlib.suppress(OSError):
            failed.unlink(missing_ok=True)
        return None, f"\n  (its assembly text could not be kept in {failed_dir}: {exc.strerror or exc})"
    return failed, ""
