"""Private working folders that survive nothing: locked while in use, removed on every exit path, and
recognised as stale (and removed) by the next run when their owner was killed.

Each folder is locked with flock(2) on its own directory file descriptor, which the kernel releases when the
owner dies, however it dies; nothing is written into the folder for the lock and no PID is trusted. A folder
is created under a `.tensile-lite-new-` name, locked, and only then renamed to its final name, so a sweeper
never sees an unlocked folder of a live run under a name it may remove.

Moves into place fall back to copy-and-rename when source and destination are on different filesystems
(TMPDIR on tmpfs, the output on disk, or the other way round), so a build never depends on where its
temporaries live.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from tensile_lite.errors import OutputError

PREFIX = ".tensile-lite-"
KINDS = ("staging", "tmp", "helpers")
# `<kind>-<pid>-<random>`: only names this module gives (so only folders that were locked from birth)
_STALE = re.compile(rf"^{re.escape(PREFIX)}({'|'.join(KINDS)})-[0-9]+-")
_NEWBORN = f"{PREFIX}new-"
_NEWBORN_STALE_AFTER = 3600.0  # seconds; a newborn lives for microseconds unless its owner was killed then
_LOCK_POLL = 0.2  # seconds between attempts while waiting for another build's lock


def _open_dir(path: Path) -> int:
    return os.open(path, os.O_RDONLY | os.O_DIRECTORY)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


@contextlib.contextmanager
def locked_folder(path: Path, wait: float, on_wait: Callable[[str], None] = lambda _m: None) -> Iterator[None]:
    """Hold an exclusive lock on the folder `path` (which must exist) for the duration; wait up to `wait`
    seconds for another holder, telling `on_wait` once, then fail naming the folder."""
    fd = _open_dir(path)
    try:
        deadline = time.monotonic() + max(wait, 0.0)
        told = False
        while not _try_lock(fd):
            if time.monotonic() >= deadline:
                raise OutputError(f"another TensileCreateLibrary is building into {path} (it holds the folder's "
                                  f"lock); waited {wait:g} s (--lock-timeout), giving up")
            if not told:
                on_wait(f"note: another build holds {path}; waiting up to {wait:g} s for it to finish")
                told = True
            time.sleep(_LOCK_POLL)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _newborn(parent: Path) -> Path:
    try:
        return Path(tempfile.mkdtemp(prefix=_NEWBORN, dir=parent))
    except OSError as exc:
        raise OutputError(f"cannot create a working folder in {parent}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def private_dir(parent: Path, kind: str) -> Iterator[Path]:
    """A fresh folder `<parent>/.tensile-lite-<kind>-<pid>-XXXX`, locked while in use and removed after."""
    if kind not in KINDS:
        raise ValueError(f"unknown working-folder kind {kind!r}")
    born = _newborn(parent)
    fd = _open_dir(born)
    try:
        _try_lock(fd)  # nobody else knows the name yet: this cannot fail
        final = born.with_name(f"{PREFIX}{kind}-{os.getpid()}-{born.name[len(_NEWBORN):]}")
        os.rename(born, final)  # the lock belongs to the inode and moves with it
        born = final
        yield final
    finally:
        shutil.rmtree(born, ignore_errors=True)
        os.close(fd)


def _remove_if_unlocked(path: Path) -> bool:
    try:
        fd = _open_dir(path)
    except OSError:
        return False
    try:
        if not _try_lock(fd):
            return False  # a live run owns it
        shutil.rmtree(path, ignore_errors=True)
        return not path.exists()
    finally:
        os.close(fd)


def sweep_stale(parent: Path) -> list[Path]:
    """Remove the working folders in `parent` left by runs that were killed; return what was removed.

    A folder whose lock is held belongs to a live run and is left alone; so is anything we may not remove
    (another user's folder in a shared /tmp)."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        with contextlib.suppress(OSError):
            if not entry.is_dir(follow_symlinks=False):
                continue
            path = Path(entry.path)
            if _STALE.match(entry.name):
                if _remove_if_unlocked(path):
                    removed.append(path)
            elif entry.name.startswith(_NEWBORN) and now - entry.stat().st_mtime > _NEWBORN_STALE_AFTER:
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
    return removed


def move_file(src: Path, dest: Path) -> None:
    """Move `src` to `dest` atomically; across filesystems, copy next to `dest` first, then rename."""
    try:
        os.replace(src, dest)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    tmp = dest.with_name(f".{dest.name}.move-{os.getpid()}")
    try:
        shutil.copy2(src, tmp)
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    src.unlink(missing_ok=True)


def move_tree(src: Path, dest: Path) -> None:
    """Move the folder `src` to `dest` (replacing nothing: `dest` must not exist), across filesystems too."""
    try:
        os.rename(src, dest)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        shutil.copytree(src, dest)
        shutil.rmtree(src, ignore_errors=True)
