"""Issue 4 figures: `.dat` size per library format for the whole dev set, write time, and the cost of loading
the largest library with the msgpack library (time and peak RSS, in a fresh process).

`python -m benchmarks.bench_metadata` writes benchmarks/results/metadata-<date>.json.

Upstream comparison: upstream_baseline.md measured upstream's own msgpack bytes for a 9-file gfx942 build
(4.61 MB; zstd -19 per file 61 KB). For the dev set itself we only have upstream's trees as JSON
(shared/reference); re-encoding them with Python's msgpack approximates upstream's bytes (same content,
other key order), so those figures are labelled as an approximation.
"""

from __future__ import annotations

import datetime
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import msgpack
import zstandard

from benchmarks.upstream import BASELINE_NINE_FILES
from tensile_lite.library import FORMATS, build_plan, write_library
from tensile_lite.library.formats import ZSTD_LEVEL, ZSTD_WINDOW_LOG
from tensile_lite.logic import find_logic_files, read_logic_file

ROOT = Path(__file__).resolve().parents[1]

# Runs in a fresh interpreter: peak RSS before and after loading, and the best of several load times.
_LOADER = r"""
import sys, time, zlib
import msgpack

def peak_rss():
    # VmHWM is this process's own high-water mark (ru_maxrss would carry the parent's over exec).
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmHWM:"))

path = sys.argv[1]
before = peak_rss()
times = []
for _ in range(int(sys.argv[2])):
    t = time.perf_counter()
    data = open(path, "rb").read()
    if data[:4] == b"\x28\xb5\x2f\xfd":
        import zstandard
        data = zstandard.ZstdDecompressor().decompress(data)
    elif path.endswith(".zlib"):
        data = zlib.decompress(data)
    doc = msgpack.unpackb(data, raw=False, strict_map_key=False)
    times.append(time.perf_counter() - t)
    del doc, data
print(before, peak_rss(), min(times))
"""


def shared_root() -> Path:
    return Path(os.environ.get("TENSILE_LITE_SHARED", ROOT.parent / "shared"))


def measure_load(path: Path, repeats: int = 5) -> dict[str, Any]:
    out = subprocess.run([sys.executable, "-c", _LOADER, str(path), str(repeats)], capture_output=True,
                         text=True, check=True).stdout.split()
    before, after, best = int(out[0]), int(out[1]), float(out[2])
    return {"file": path.name, "bytes": path.stat().st_size, f"load_s_best_of_{repeats}": round(best, 4),
            "peak_rss_bytes": after, "peak_rss_increase_bytes": after - before}


def _zstd(data: bytes) -> int:
    params = zstandard.ZstdCompressionParameters.from_level(ZSTD_LEVEL, window_log=ZSTD_WINDOW_LOG,
                                                            enable_ldm=True, write_content_size=True)
    return len(zstandard.ZstdCompressor(compression_params=params).compress(data))


def reference_reencoded(reference: Path) -> dict[str, Any] | None:
    """Upstream's dev-set trees (JSON) packed with Python msgpack: an approximation of upstream's .dat bytes."""
    files = sorted(reference.glob("dat/*/*.dat.json"))
    if not files:
        return None
    sizes = []
    largest_bytes = b""
    for f in files:
        packed = msgpack.packb(json.loads(f.read_text()), use_bin_type=True)
        sizes.append((len(packed), _zstd(packed), len(zlib.compress(packed, 9)), f.name))
        largest_bytes = max(largest_bytes, packed, key=len)
    total = sum(s[0] for s in sizes)
    largest = max(sizes)
    with tempfile.TemporaryDirectory(prefix="bench-metadata-ref-") as tmp:
        path = Path(tmp) / largest[3].removesuffix(".json")
        path.write_bytes(largest_bytes)
        load = measure_load(path)
    return {
        "note": "approximation: upstream's JSON trees re-encoded, not upstream's own msgpack bytes; gfx1200 "
                "covers only one of its two logic files (8 fewer solutions than ours)",
        "files": len(files), "msgpack_bytes": total, "msgpack_zstd_bytes": sum(s[1] for s in sizes),
        "msgpack_zlib_bytes": sum(s[2] for s in sizes),
        "zstd_percent_of_msgpack": round(100 * sum(s[1] for s in sizes) / total, 2),
        "zlib_percent_of_msgpack": round(100 * sum(s[2] for s in sizes) / total, 2),
        "largest_file": largest[3], "largest_msgpack_bytes": largest[0], "load_largest": load,
    }


def main() -> int:
    logic = shared_root() / "logic"
    if not logic.is_dir():
        print(f"{logic} not found; set TENSILE_LITE_SHARED", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    files = [read_logic_file(p) for p in find_logic_files([logic])]
    t1 = time.perf_counter()
    plan = build_plan(files)
    t2 = time.perf_counter()
    formats: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-metadata-") as tmp:
        largest: dict[str, Path] = {}
        for fmt in FORMATS:
            out = Path(tmp) / fmt / "library"
            start = time.perf_counter()
            paths = write_library(plan, out, fmt)
            wall = time.perf_counter() - start
            sizes = {p: p.stat().st_size for p in paths}
            big = max(sizes, key=lambda p: sizes[p])
            largest[fmt] = big
            formats[fmt] = {"files": len(paths), "bytes": sum(sizes.values()), "write_s": round(wall, 3),
                            "largest_file": big.name, "largest_bytes": sizes[big]}
        base = formats["msgpack"]["bytes"]
        for row in formats.values():
            row["percent_of_msgpack"] = round(100 * row["bytes"] / base, 2)
        # Files over 100 kB: where the fixed per-file cost of compression stops dominating.
        big_plain = [p for p in (Path(tmp) / "msgpack" / "library").iterdir() if p.stat().st_size > 100_000]
        big_bytes = sum(p.stat().st_size for p in big_plain)
        big_zstd = sum((Path(tmp) / "msgpack-zstd" / "library" / p.name).stat().st_size for p in big_plain)
        loads = {fmt: measure_load(largest[fmt]) for fmt in ("msgpack", "msgpack-zstd", "msgpack-zlib")}
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    upstream_dat = BASELINE_NINE_FILES["out_dat"]
    result = {
        "scenario": "metadata", "date": datetime.date.today().isoformat(), "commit": commit,
        "dev_set": {"logic_files": len(files), "solutions": sum(a.solution_count for a in plan.archs),
                    "archs": len(plan.archs), "placeholders": sum(len(a.placeholders) for a in plan.archs),
                    "kernels": sum(len(a.kernels) for a in plan.archs)},
        "parse_s": round(t1 - t0, 3), "plan_s": round(t2 - t1, 3),
        "formats": formats,
        "zstd_percent_of_msgpack": formats["msgpack-zstd"]["percent_of_msgpack"],
        "zstd_target_percent": 2.0,
        "zstd_percent_of_msgpack_files_over_100kB": round(100 * big_zstd / big_bytes, 2),
        "files_over_100kB": len(big_plain),
        "load_largest": loads,
        "upstream": {
            "baseline_9_files_gfx942": {"msgpack_bytes": upstream_dat.value, "zstd19_per_file_bytes": 61e3,
                                        "zstd_percent_of_msgpack": round(100 * 61e3 / upstream_dat.value, 2),
                                        "source": upstream_dat.source},
            "zlib_percent_stated": 7,
            "dev_set_reference_reencoded": reference_reencoded(shared_root() / "reference"),
        },
    }
    out = ROOT / "benchmarks" / "results" / f"metadata-{result['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = out.with_name(out.name + ".tmp")
    tmp_out.write_text(json.dumps(result, indent=1) + "\n")
    os.replace(tmp_out, out)
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
