"""Upstream's figures that our results are shown beside, each with where it comes from.

`BASELINE_*`: upstream TensileCreateLibrary measured on a machine like ours (../shared/spec/upstream_baseline.md:
hipBLASLt 7d9fb683, Tensile 4.33.0, hipBLASLt's CMake flags, --jobs=2, --architecture=gfx942, LLVM 19).
`PUBLISHED`: figures from issue threads and packagers (../shared/spec/anchors.md §2).
`REFERENCE_KERNELS`: what upstream built from our dev set (../shared/reference/README.md).
"""

from __future__ import annotations

import attrs

MiB = 2**20

_BASELINE = "upstream_baseline.md (2 cores, 24 GiB, --jobs=2, gfx942)"
_REFERENCE = "shared/reference/README.md (upstream run per architecture on the dev set)"


@attrs.frozen(slots=True)
class Figure:
    what: str
    value: float
    unit: str  # "s", "bytes", "count", "ratio", "cpu-s/kernel", "kernels/s", "percent"
    source: str
    stated: str = ""  # as the source words it (units converted only in comparisons)


def _baseline(files: str, **values: tuple[float, str]) -> dict[str, Figure]:
    units = {"wall_s": "s", "cpu_s": "s", "cpu_s_per_kernel": "cpu-s/kernel", "peak_temp_files": "count",
             "kernels": "count", "helper_kernels": "count", "solutions": "count"}
    labels = {
        "logic_bytes": "logic bytes", "solutions": "solutions", "kernels": "assembly kernels",
        "helper_kernels": "helper (source) kernels", "wall_s": "wall time", "cpu_s": "CPU user + sys",
        "peak_process_rss": "peak RSS, largest process", "peak_tree_rss": "peak RSS, whole process tree",
        "peak_temp_disk": "peak temporary disk (build_tmp)", "peak_temp_files": "files in build_tmp at peak",
        "out_co": ".co output", "out_dat": ".dat output (msgpack)", "cpu_s_per_kernel": "CPU-s per kernel",
    }
    return {k: Figure(f"{labels[k]}, {files}", v, units.get(k, "bytes"), _BASELINE, stated)
            for k, (v, stated) in values.items()}


BASELINE_ONE_FILE = _baseline(
    "1 file", logic_bytes=(241e3, "241 KB"), solutions=(34, "34"), kernels=(31, "31"),
    helper_kernels=(27, "27"), wall_s=(74, "74 s"), cpu_s=(90, "90 s"), peak_process_rss=(178 * MiB, "178 MiB"),
    peak_tree_rss=(786 * MiB, "786 MiB"), peak_temp_disk=(9 * MiB, "9 MiB"), peak_temp_files=(64, "64"),
    out_co=(3.79e6, "3.79 MB"), out_dat=(105e3, "105 KB"), cpu_s_per_kernel=(90 / 31, "2.9 (90 s / 31)"),
)

BASELINE_NINE_FILES = _baseline(
    "9 files", logic_bytes=(9.71e6, "9.71 MB"), solutions=(1443, "1,443"), kernels=(763, "763"),
    helper_kernels=(241, "241"), wall_s=(679, "679 s"), cpu_s=(793, "793 s"),
    peak_process_rss=(506 * MiB, "506 MiB"), peak_tree_rss=(1434 * MiB, "1,434 MiB"),
    peak_temp_disk=(127 * MiB, "127 MiB"), peak_temp_files=(1530, "1,530"), out_co=(62.5e6, "62.5 MB"),
    out_dat=(4.61e6, "4.61 MB"), cpu_s_per_kernel=(793 / 763, "1.04 (793 s / 763)"),
)

# Where upstream's CPU goes, 9-file run (per kernel unless said otherwise).
BASELINE_BREAKDOWN = (
    Figure("Python kernel generation per kernel", 0.83, "cpu-s/kernel", _BASELINE, "~0.83 CPU-s"),
    Figure("assembling + linking per kernel", 0.12, "cpu-s/kernel", _BASELINE, "~0.12 CPU-s"),
    Figure("assembler capability probing at every start", 50, "s", _BASELINE, "~50 s (873 assembler runs)"),
    Figure("HIP helper-kernel compile", 21, "s", _BASELINE, "~21 s"),
    Figure("share of the two cores busy over the run", 58, "percent", _BASELINE, "58 %"),
    Figure("assembly text per kernel (median)", 0.99e6, "bytes", _BASELINE, "0.99 MB"),
    Figure("comment characters in the assembly", 34.1, "percent", _BASELINE, "34.1 %"),
    Figure("all 25,555 gfx942 solutions, 2 cores (extrapolated)", 3.3 * 3600, "s", _BASELINE, "~3.3 h"),
)

PUBLISHED = (
    Figure("peak temporary disk, all ISAs, unpatched", 240e9, "bytes", "nixpkgs#449985, rocm-libraries#2072",
           "~240 GB"),
    Figure("…without assembly comments", 150e9, "bytes", "nixpkgs#449985", "150 GB"),
    Figure("…assemble then unlink", 25e9, "bytes", "rocm-libraries#2073, nixpkgs#451188", "25 GB"),
    Figure("gfx90a alone, temporary disk", 35e9, "bytes", "ROCm/composable_kernel#3362", "about 35 GB"),
    Figure("peak RAM, gfx942, 64 workers (before)", 108_930 * MiB, "bytes", "hipBLASLt#1073", "108,930 MiB"),
    Figure("peak RAM, gfx942, 64 workers (after #1073)", 70_725 * MiB, "bytes", "hipBLASLt#1073", "70,725 MiB"),
    Figure("peak RAM, all targets (mprof, 2024)", 5e12, "bytes", "hipBLASLt#1037", "~5 TB"),
    Figure("gfx942 release build throughput", 74, "kernels/s", "TheRock#6182",
           "176,550 kernels in 2,383 s (74/s)"),
    Figure("gfx942 .dat total, raw msgpack", 2.21e9, "bytes", "rocm-libraries#8294", "2.21 GB"),
    Figure("gfx942 .dat total, zlib-9", 0.15e9, "bytes", "rocm-libraries#8294", "0.15 GB"),
    Figure("gfx942 individual .dat files", 26e6, "bytes", "rocm-libraries#1327", "21-28 MB, largest 45.4 MiB"),
    Figure("gfx1151 TensileCreateLibrary", 60, "s", "rocm-libraries#9756", "~1 minute"),
)

# arch -> (solutions, assembly kernels) upstream built from our dev set; gfx1200 is from 1 of its 2 files.
REFERENCE_KERNELS: dict[str, tuple[int, int]] = {
    "gfx908": (3, 3), "gfx90a": (370, 369), "gfx940": (463, 463), "gfx941": (11, 11), "gfx942": (995, 770),
    "gfx1100": (77, 68), "gfx1101": (43, 34), "gfx1102": (164, 130), "gfx1200": (29, 29), "gfx1201": (127, 127),
}
REFERENCE_SOURCE = _REFERENCE

# Scenario whose logic and flags come closest to a baseline column: gfx942 at --jobs 2 (770 kernels here,
# 763 there), so its figures can be set beside upstream's directly.
COMPARABLE: dict[str, dict[str, Figure]] = {"build-gfx942-j2": BASELINE_NINE_FILES}
