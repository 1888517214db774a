"""Where and on what a result was measured: the machine, the toolchain and the git commit."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parents[1]


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def toolchain_description() -> str | None:
    """The LLVM the project would use, or None; a missing toolchain must not stop a measurement."""
    try:
        from tensile_lite.codeobj.toolchain import find_toolchain

        return find_toolchain().describe()
    except Exception as exc:  # any failure here only means "unknown"
        return f"unavailable: {exc}"


def machine() -> dict[str, Any]:
    # Load average matters: the machine is shared, and a busy neighbour shows up in wall time.
    return {
        "cores_logical": psutil.cpu_count(logical=True),
        "cores_physical": psutil.cpu_count(logical=False),
        "cpu_model": cpu_model(),
        "memory_bytes": psutil.virtual_memory().total,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "toolchain": toolchain_description(),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def git_state() -> dict[str, Any]:
    """Commit, its date, and whether the working tree differs from it (then the commit alone is not the code)."""
    commit = _git("rev-parse", "HEAD")
    status = _git("status", "--porcelain", "--untracked-files=no")
    return {
        "commit": commit,
        "short": commit[:8] if commit else "nogit",
        "date": _git("show", "-s", "--format=%cI", "HEAD") if commit else None,
        "dirty": bool(status) if status is not None else None,
    }
