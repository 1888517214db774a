"""PNG of tree RSS and disk over time for a build result (one line per run, e.g. per scaling share)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

MiB = 2**20


def plottable_runs(result: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [r for r in result.get("runs", []) if "dir:tmp" in r.get("series", {}) and r["series"]["t"]]


def plot_result(result: Mapping[str, Any], path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # no display here; the caller only wants a file
    import matplotlib.pyplot as plt

    runs = plottable_runs(result)
    fig, (ax_rss, ax_disk) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for run in runs:
        s = run["series"]
        label = run.get("label", "run")
        ax_rss.plot(s["t"], [v / MiB for v in s["tree_rss"]], label=label)
        temp = [a + b for a, b in zip(s["dir:tmp"], s.get("dir:cwd", [0] * len(s["t"])), strict=True)]
        (line,) = ax_disk.plot(s["t"], [v / MiB for v in temp], label=f"{label}: temporary (tmp + cwd)")
        if "dir:out" in s:
            ax_disk.plot(s["t"], [v / MiB for v in s["dir:out"]], linestyle="--", color=line.get_color(),
                         label=f"{label}: output")
    ax_rss.set_ylabel("process-tree RSS (MiB)")
    ax_disk.set_ylabel("disk (MiB)")
    ax_disk.set_xlabel("time (s)")
    for ax in (ax_rss, ax_disk):
        ax.grid(True, alpha=0.3)
        if runs:
            ax.legend(fontsize=7, loc="upper left")
    commit = result.get("git", {}).get("short", "?")
    fig.suptitle(f"{result['scenario']} at {commit} ({result.get('finished_at', '')[:10]})")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path
