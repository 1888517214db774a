"""Finding logic files under a path, in a stable order."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

from tensile_lite.errors import LogicError, Where

# ROCm 7.x keeps logic files that are not meant for release builds below folders of this name; its
# generator leaves them out unless asked (`--experimental`, spec/rocm7_delta.md §1.1 and addendum item 6).
EXPERIMENTAL_FOLDER = "Experimental"


def find_logic_files(paths: Iterable[str | Path], pattern: str = "*", *, experimental: bool = False) -> list[Path]:
    """Every `*.yaml` file given or below the given folders whose stem matches `pattern`, sorted.

    Files below an `Experimental/` folder inside a given folder are left out unless `experimental`;
    a file named directly is always taken. Sorting makes every later step independent of the order the
    filesystem lists files in.
    """
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.update(p for p in path.rglob("*.yaml") if p.is_file() and (
                experimental or EXPERIMENTAL_FOLDER not in p.relative_to(path).parts[:-1]))
        elif path.is_file():
            found.add(path)
        else:
            raise LogicError("no such file or folder", Where(file=str(path)))
    return sorted((p for p in found if fnmatch.fnmatch(p.name, f"{pattern}.yaml") or pattern == "*"),
                  key=lambda p: p.as_posix())
