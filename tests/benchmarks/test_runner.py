"""The runner against real child processes: known allocations, a grandchild, a folder that grows and shrinks."""

from __future__ import annotations

import sys
import textwrap
import time
from pathlib import Path

from benchmarks.runner import folder_size, measure, measure_call, output_kind, output_sizes

MiB = 2**20

# The child holds 60 MiB, starts a grandchild that holds 60 MiB more, and both keep it until the grandchild
# has slept long enough for several samples; `b"x" * n` writes every byte, so the pages are resident.
_TREE = textwrap.dedent("""
    import subprocess, sys, time
    held = b"x" * (60 * 2**20)
    grandchild = "import time; held = b'y' * (60 * 2**20); time.sleep(1.0)"
    subprocess.run([sys.executable, "-c", grandchild], check=True)
    time.sleep(0.2)
""")


def test_tree_rss_counts_child_and_grandchild() -> None:
    m = measure([sys.executable, "-c", _TREE], watch_dirs={}, interval=0.05)
    assert m.exit_code == 0, m.stderr
    assert m.peak_tree_rss >= 120 * MiB
    assert m.peak_process_rss >= 60 * MiB
    assert m.peak_processes >= 2
    assert m.cpu_s > 0
    assert m.wall_s >= 1.0
    series = m.to_json()["series"]
    # The peak may also come from a process's own high-water mark, which sampling can miss.
    assert 0 < max(series["tree_rss"]) <= m.peak_tree_rss


def test_peak_process_rss_of_a_run_too_short_to_sample() -> None:
    # Allocates and exits at once: the kernel's high-water mark still reports it.
    m = measure([sys.executable, "-c", "held = b'x' * (80 * 2**20)"], watch_dirs={}, interval=5.0)
    assert m.peak_process_rss >= 80 * MiB
    assert m.peak_tree_rss >= m.peak_process_rss


def test_exit_code_and_output_are_kept() -> None:
    m = measure([sys.executable, "-c", "import sys; print('hello'); sys.exit(3)"], watch_dirs={})
    assert m.exit_code == 3
    assert m.stdout.strip() == "hello"


_GROW_SHRINK = textwrap.dedent("""
    import os, sys, time
    folder = sys.argv[1]
    big = os.path.join(folder, "sub", "big.s")
    os.makedirs(os.path.dirname(big))
    with open(big, "wb") as f:
        f.write(b"\\0" * (5 * 2**20))
    time.sleep(0.6)
    os.unlink(big)
    with open(os.path.join(folder, "lib.co"), "wb") as f:
        f.write(b"\\0" * 2**20)
""")


def test_watched_folder_peak_and_final(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    m = measure([sys.executable, "-c", _GROW_SHRINK, str(out)], watch_dirs={"out": out}, interval=0.05)
    assert m.exit_code == 0, m.stderr
    assert m.peak_dirs["out"] >= 5 * MiB
    assert m.final_dirs["out"] == MiB
    assert m.peak_dir_files["out"] >= 1
    assert m.outputs["out"].bytes["co"] == MiB
    assert m.peak_of(["out"]) == m.peak_dirs["out"]


def test_folder_size_of_missing_folder_is_zero(tmp_path: Path) -> None:
    assert folder_size(tmp_path / "gone") == (0, 0)


def test_output_kinds(tmp_path: Path) -> None:
    sizes = {"a.co": 10, "TensileLibrary_lazy_gfx942.dat": 20, "x.dat.zlib": 30,
             "Kernels.so-000-gfx942.hsaco": 40, "TensileManifest.txt": 5}
    (tmp_path / "library").mkdir()
    for name, size in sizes.items():
        (tmp_path / "library" / name).write_bytes(b"\0" * size)
    assert output_kind("x.dat.zlib") == "dat.zlib"
    got = output_sizes(tmp_path)
    assert got.bytes == {"co": 10, "dat": 20, "dat.zlib": 30, "hsaco": 40, "other": 5}
    assert got.files == {"co": 1, "dat": 1, "dat.zlib": 1, "hsaco": 1, "other": 1}
    assert got.total == 105


def test_measure_call_sees_an_allocation() -> None:
    def allocate() -> int:
        held = b"x" * (50 * MiB)
        time.sleep(0.2)  # long enough for the sampling thread, whatever the process high-water mark was
        return len(held)

    m = measure_call(allocate)
    assert m.value == 50 * MiB
    assert m.peak_rss_delta >= 45 * MiB
    assert m.cpu_s >= 0


def test_measure_call_traces_python_allocations() -> None:
    m = measure_call(lambda: [str(i) for i in range(100_000)], trace_python=True)
    assert m.python_peak is not None and m.python_peak > 1_000_000


# The child starts a grandchild and exits without waiting for it, as a multiprocessing forkserver does: the
# grandchild's CPU would be lost to init's accounting unless the runner adopts and reaps it.
_ORPHAN = textwrap.dedent("""
    import subprocess, sys
    burn = "import time\\nwhile time.process_time() < 0.5: pass"
    subprocess.Popen([sys.executable, "-c", burn])
""")


def test_orphaned_grandchild_cpu_is_counted() -> None:
    m = measure([sys.executable, "-c", _ORPHAN], watch_dirs={}, interval=0.05)
    assert m.exit_code == 0, m.stderr
    assert m.cpu_user_s + m.cpu_sys_s >= 0.5
    assert m.cpu_s >= 0.5
