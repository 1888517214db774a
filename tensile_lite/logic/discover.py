"""Finding logic files under a path, in a stable order."""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from pathlib import Path

from tensile_lite.errors import LogicError, Where


def find_logic_files(paths: Iterable[str | Path], pattern: str = "*") -> list[Path]:
    """Every `*.yaml` file given or below the given folders whose stem matches `pattern`, sorted.

    Sorting makes every later step independent of the order the filesystem lists files in.
    """
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.update(p for p in path.rglob("*.yaml") if p.is_file())
        elif path.is_file():
            found.add(path)
        else:
            raise LogicError("no such file or folder", Where(file=str(path)))
    return sorted((p for p in found if fnmatch.fnmatch(p.name, f"{pattern}.yaml") or pattern == "*"),
                  key=lambda p: p.as_posix())
