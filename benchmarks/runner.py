"""Measure a command's whole process tree, and the folders it writes, while it runs.

`measure()` samples on a fixed interval: the summed RSS of the process and all its descendants, their CPU time,
and the byte size of each watched folder. Sampling can miss short spikes, so the kernel's own accounting is
folded in where it exists: `wait4` reports exact CPU time of the child plus every descendant it reaped, and the
high-water RSS of the largest single process among them. Descendants whose parent exits without waiting for
them (a multiprocessing forkserver, for one) would escape that accounting, so while measuring, this process is
made a child subreaper (Linux): such orphans are re-parented here, sampled with the tree, and reaped and
counted at the end.

`measure_call()` is the in-process counterpart for timing a Python function.
"""

from __future__ import annotations

import os
import resource
import select
import signal
import subprocess
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import psutil

OUTPUT_KINDS: tuple[str, ...] = ("co", "dat", "dat.zlib", "hsaco", "other")

# Keeps committed JSON small while keeping every peak (see `_downsample`).
MAX_SERIES_POINTS = 600


@attrs.frozen(slots=True)
class Sample:
    t: float
    tree_rss: int
    max_process_rss: int
    processes: int
    cpu_s: float
    dirs: tuple[int, ...]
    dir_files: tuple[int, ...]


@attrs.frozen(slots=True)
class OutputSizes:
    bytes: Mapping[str, int]
    files: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.bytes.values())


@attrs.frozen(slots=True)
class Measurement:
    cmd: tuple[str, ...]
    exit_code: int
    wall_s: float
    cpu_user_s: float
    cpu_sys_s: float
    cpu_sampled_s: float
    peak_tree_rss: int
    peak_process_rss: int
    peak_processes: int
    watch_names: tuple[str, ...]
    peak_dirs: Mapping[str, int]
    final_dirs: Mapping[str, int]
    peak_dir_files: Mapping[str, int]
    outputs: Mapping[str, OutputSizes]
    samples: tuple[Sample, ...]
    stdout: str
    stderr: str
    interval: float

    @property
    def cpu_s(self) -> float:
        """Exact rusage of the tree; the sampled total only if it is larger (a descendant escaped both the
        tree's waits and ours, e.g. where a subreaper is not available): then a lower bound."""
        return max(self.cpu_user_s + self.cpu_sys_s, self.cpu_sampled_s)

    def peak_of(self, names: Sequence[str]) -> int:
        """Peak of the summed size of several watched folders (they may peak at different times)."""
        idx = [self.watch_names.index(n) for n in names]
        finals = sum(self.final_dirs[n] for n in names)
        return max([sum(s.dirs[i] for i in idx) for s in self.samples] + [finals])

    def to_json(self, max_points: int = MAX_SERIES_POINTS, stderr_tail: int = 2000) -> dict[str, Any]:
        return {
            "cmd": list(self.cmd),
            "exit_code": self.exit_code,
            "wall_s": round(self.wall_s, 4),
            "cpu_s": round(self.cpu_s, 4),
            "cpu_user_s": round(self.cpu_user_s, 4),
            "cpu_sys_s": round(self.cpu_sys_s, 4),
            "cpu_sampled_s": round(self.cpu_sampled_s, 4),
            "peak_tree_rss": self.peak_tree_rss,
            "peak_process_rss": self.peak_process_rss,
            "peak_processes": self.peak_processes,
            "peak_dirs": dict(self.peak_dirs),
            "final_dirs": dict(self.final_dirs),
            "peak_dir_files": dict(self.peak_dir_files),
            "outputs": {k: {"bytes": dict(v.bytes), "files": dict(v.files)} for k, v in self.outputs.items()},
            "interval": self.interval,
            "samples": len(self.samples),
            "stderr_tail": self.stderr[-stderr_tail:],
            "series": series_json(self.samples, self.watch_names, max_points),
        }


def series_json(samples: Sequence[Sample], names: Sequence[str], max_points: int) -> dict[str, list]:
    kept = _downsample(samples, max_points)
    out: dict[str, list] = {
        "t": [round(s.t, 3) for s in kept],
        "tree_rss": [s.tree_rss for s in kept],
        "cpu_s": [round(s.cpu_s, 3) for s in kept],
        "processes": [s.processes for s in kept],
    }
    for i, name in enumerate(names):
        out[f"dir:{name}"] = [s.dirs[i] for s in kept]
    return out


def _downsample(samples: Sequence[Sample], max_points: int) -> list[Sample]:
    """At most max_points samples; each bucket keeps its maxima so no peak disappears from a plot."""
    if len(samples) <= max_points:
        return list(samples)
    step = -(-len(samples) // max_points)
    kept = []
    for start in range(0, len(samples), step):
        bucket = samples[start:start + step]
        kept.append(Sample(
            t=bucket[-1].t,
            tree_rss=max(s.tree_rss for s in bucket),
            max_process_rss=max(s.max_process_rss for s in bucket),
            processes=max(s.processes for s in bucket),
            cpu_s=bucket[-1].cpu_s,
            dirs=tuple(max(col) for col in zip(*(s.dirs for s in bucket), strict=True)),
            dir_files=tuple(max(col) for col in zip(*(s.dir_files for s in bucket), strict=True)),
        ))
    return kept


def folder_size(path: Path | str) -> tuple[int, int]:
    """(bytes, files) under path, apparent sizes; files that vanish while walking are skipped."""
    total = files = 0
    stack = [os.fspath(path)]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                for entry in it:
                    try:
                        if entry.is_dir(follow_symlinks=False):
                            stack.append(entry.path)
                        else:
                            total += entry.stat(follow_symlinks=False).st_size
                            files += 1
                    except OSError:
                        continue
        except OSError:
            continue
    return total, files


def output_kind(name: str) -> str:
    for kind in ("dat.zlib", "hsaco", "dat", "co"):
        if name.endswith("." + kind):
            return kind
    return "other"


def output_sizes(path: Path | str) -> OutputSizes:
    """Bytes and file counts under path by kind (`.co`, `.dat`, `.dat.zlib`, `.hsaco`, other)."""
    sizes = dict.fromkeys(OUTPUT_KINDS, 0)
    counts = dict.fromkeys(OUTPUT_KINDS, 0)
    for root, _dirs, names in os.walk(path):
        for name in names:
            try:
                size = os.stat(os.path.join(root, name), follow_symlinks=False).st_size
            except OSError:
                continue
            kind = output_kind(name)
            sizes[kind] += size
            counts[kind] += 1
    return OutputSizes(bytes=sizes, files=counts)


_PR_SET_CHILD_SUBREAPER = 36


def _set_subreaper(on: bool) -> bool:
    """Make orphaned descendants re-parent to this process instead of init (Linux; False elsewhere)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _tree(root: psutil.Process, orphans_of: psutil.Process, before: frozenset[int]) -> list[psutil.Process]:
    """root, its descendants, and orphans of its tree re-parented to us (our children not there before)."""
    procs: list[psutil.Process] = []
    tops = [root]
    try:
        tops += [c for c in orphans_of.children() if c.pid not in before and c.pid != root.pid]
    except psutil.Error:
        pass
    for top in tops:
        try:
            procs += [top, *top.children(recursive=True)]
        except psutil.Error:
            continue
    return procs


def _sample_tree(procs: list[psutil.Process]) -> tuple[int, int, int, float]:
    """(tree RSS, largest process RSS, live processes, CPU seconds) of the tree right now.

    CPU includes each live process's reaped children, so work of finished workers is kept once their parent
    has waited for them; a process that has exited but not been reaped yet may drop out for one sample.
    """
    rss_sum = rss_max = count = 0
    cpu = 0.0
    for proc in procs:
        try:
            with proc.oneshot():
                rss = proc.memory_info().rss
                ct = proc.cpu_times()
        except psutil.Error:
            continue
        rss_sum += rss
        rss_max = max(rss_max, rss)
        count += 1
        cpu += ct.user + ct.system + ct.children_user + ct.children_system
    return rss_sum, rss_max, count, cpu


class _ExitWaiter:
    """Waits for the child's exit with a timeout and reaps it with wait4 to get its rusage."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.fd: int | None = None
        if hasattr(os, "pidfd_open"):
            try:
                self.fd = os.pidfd_open(pid)
            except OSError:
                self.fd = None

    def wait(self, timeout: float) -> tuple[int, Any] | None:
        """(wait status, rusage) once the child has exited, else None after about `timeout` seconds."""
        deadline = time.monotonic() + max(timeout, 0.0)
        while True:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG)
            if pid:
                return status, usage
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            if self.fd is not None:
                select.select([self.fd], [], [], left)
            else:
                time.sleep(min(left, 0.005))

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def measure(
    cmd: Sequence[str],
    *,
    watch_dirs: Mapping[str, Path],
    env: Mapping[str, str] | None = None,
    cwd: Path | str | None = None,
    interval: float = 0.1,
    timeout: float | None = None,
    output_dirs: Sequence[str] | None = None,
) -> Measurement:
    """Run cmd to completion and measure it (see the module docstring).

    `output_dirs` names the watched folders whose files are counted by kind after the run (default: those
    named "out"/"output"). On timeout or Ctrl-C the whole process group is killed.
    """
    names = tuple(watch_dirs)
    paths = [Path(watch_dirs[n]) for n in names]
    if output_dirs is None:
        output_dirs = [n for n in names if n in ("out", "output")]
    samples: list[Sample] = []
    me = psutil.Process()
    before = frozenset(c.pid for c in me.children())
    subreaper = _set_subreaper(True)
    try:
        with tempfile.TemporaryFile() as out_f, tempfile.TemporaryFile() as err_f:
            start = time.perf_counter()
            # A session of its own, so the whole tree can be killed by group on timeout or interrupt.
            proc = subprocess.Popen(
                list(cmd), cwd=cwd, env=None if env is None else dict(env),
                stdout=out_f, stderr=err_f, stdin=subprocess.DEVNULL, start_new_session=True,
            )
            waiter = _ExitWaiter(proc.pid)
            root = psutil.Process(proc.pid)
            cpu_seen = 0.0
            try:
                while True:
                    now = time.perf_counter() - start
                    rss, rss_max, count, cpu = _sample_tree(_tree(root, me, before))
                    cpu_seen = max(cpu_seen, cpu)
                    sizes = [folder_size(p) for p in paths]
                    samples.append(Sample(now, rss, rss_max, count, cpu_seen,
                                          tuple(b for b, _ in sizes), tuple(f for _, f in sizes)))
                    if timeout is not None and now > timeout:
                        raise TimeoutError(f"{cmd[0]} still running after {timeout:.0f} s")
                    done = waiter.wait(interval - (time.perf_counter() - start - now))
                    if done is not None:
                        break
            except BaseException:
                _kill_group(proc.pid)
                raise
            finally:
                waiter.close()
            wall = time.perf_counter() - start
            status, usage = done
            proc.returncode = os.waitstatus_to_exitcode(status)
            stdout, stderr = _read_back(out_f), _read_back(err_f)
        orphans = _reap_orphans(me, before) if subreaper else _Usage(0.0, 0.0, 0)
    finally:
        if subreaper:
            _set_subreaper(False)

    final = [folder_size(p) for p in paths]
    # ru_maxrss (KiB on Linux) is the kernel's high-water mark of the largest reaped process: exact.
    peak_process = max(max(s.max_process_rss for s in samples), usage.ru_maxrss * 1024, orphans.maxrss)
    user, system = usage.ru_utime + orphans.user, usage.ru_stime + orphans.system
    samples.append(Sample(wall, 0, 0, 0, max(cpu_seen, user + system),
                          tuple(b for b, _ in final), tuple(f for _, f in final)))
    return Measurement(
        cmd=tuple(cmd),
        exit_code=proc.returncode,
        wall_s=wall,
        cpu_user_s=user,
        cpu_sys_s=system,
        cpu_sampled_s=cpu_seen,
        # The tree is never smaller than its largest process; this also covers runs too short to sample.
        peak_tree_rss=max(max(s.tree_rss for s in samples), peak_process),
        peak_process_rss=peak_process,
        peak_processes=max(s.processes for s in samples),
        watch_names=names,
        peak_dirs={n: max(s.dirs[i] for s in samples) for i, n in enumerate(names)},
        final_dirs={n: final[i][0] for i, n in enumerate(names)},
        peak_dir_files={n: max(s.dir_files[i] for s in samples) for i, n in enumerate(names)},
        outputs={n: output_sizes(watch_dirs[n]) for n in output_dirs},
        samples=tuple(samples),
        stdout=stdout,
        stderr=stderr,
        interval=interval,
    )


def _read_back(f: Any) -> str:
    f.seek(0)
    return f.read().decode("utf-8", "replace")


@attrs.frozen(slots=True)
class _Usage:
    user: float
    system: float
    maxrss: int


def _reap_orphans(me: psutil.Process, before: frozenset[int], wait_s: float = 10.0) -> _Usage:
    """Wait for the tree's orphans re-parented to us (they usually exit with their parent) and add up
    their rusage; one still running after wait_s is left alone and its CPU goes uncounted."""
    user = system = 0.0
    maxrss = 0
    deadline = time.monotonic() + wait_s
    while True:
        try:
            pending = [c.pid for c in me.children() if c.pid not in before]
        except psutil.Error:
            pending = []
        for pid in pending:
            try:
                got, _status, usage = os.wait4(pid, os.WNOHANG)
            except ChildProcessError:
                continue
            if got:
                user += usage.ru_utime
                system += usage.ru_stime
                maxrss = max(maxrss, usage.ru_maxrss * 1024)
        if not pending or time.monotonic() > deadline:
            return _Usage(user, system, maxrss)
        time.sleep(0.02)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


@attrs.frozen(slots=True)
class CallMeasurement:
    value: Any
    wall_s: float
    cpu_s: float
    rss_before: int
    peak_rss: int
    python_peak: int | None

    @property
    def peak_rss_delta(self) -> int:
        return self.peak_rss - self.rss_before

    def to_json(self) -> dict[str, Any]:
        return {
            "wall_s": round(self.wall_s, 6),
            "cpu_s": round(self.cpu_s, 6),
            "rss_before": self.rss_before,
            "peak_rss": self.peak_rss,
            "peak_rss_delta": self.peak_rss_delta,
            "python_peak": self.python_peak,
        }


def measure_call(
    fn: Callable[..., Any], *args: Any, interval: float = 0.01, trace_python: bool = False, **kwargs: Any
) -> CallMeasurement:
    """Time fn(*args, **kwargs) in this process: wall, CPU of this process, peak RSS.

    Peak RSS is the larger of a sampling thread's maximum and the process high-water mark when the call
    raised it. `trace_python` adds tracemalloc's peak of Python allocations (slower: time it separately).
    """
    me = psutil.Process()
    before = me.memory_info().rss
    hwm_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    peak = [before]
    stop = threading.Event()

    def sampler() -> None:
        while not stop.wait(interval):
            peak[0] = max(peak[0], me.memory_info().rss)

    thread = threading.Thread(target=sampler, daemon=True)
    thread.start()
    if trace_python:
        tracemalloc.start()
    try:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        value = fn(*args, **kwargs)
        wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
        python_peak = tracemalloc.get_traced_memory()[1] if trace_python else None
    finally:
        if trace_python:
            tracemalloc.stop()
        stop.set()
        thread.join()
    peak_rss = max(peak[0], me.memory_info().rss)
    hwm_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if hwm_after > hwm_before:
        peak_rss = max(peak_rss, hwm_after)
    return CallMeasurement(value, wall, cpu, before, peak_rss, python_peak)
