"""Finding logic files under a path, in a stable order, the way the generator's `--logic-filter` and
`--experimental` select them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tensile_lite.errors import LogicError, Where

# ROCm 7.x keeps logic files that are not meant for release builds below folders of this name (any case);
# its generator leaves them out unless asked (`--experimental`, spec/rocm7_delta.md §2.2 and addendum item 6).
EXPERIMENTAL_FOLDER = "experimental"


def filter_regex(pattern: str) -> re.Pattern[str]:
    """`--logic-filter` as a regular expression over a file's path below the logic root (POSIX form).

    The filter names files as `LOGIC/**/<filter>.yaml` (spec/rocm7_delta.md addendum): a plain glob such as
    `*HHS*` matches file names (the 2024 meaning), a path-style one such as `gfx942/FreeSize/*` matches the
    trailing folders too. A filter already ending in `.yaml` (the form the 7.x validation step passes,
    `**/<filter>.yaml`) is taken as is. `*` and `?` stay within one folder; `**/` spans any number of them.
    """
    glob = pattern if pattern.endswith(".yaml") else f"{pattern}.yaml"
    while glob.startswith("**/"):  # any leading folders are matched anyway
        glob = glob[3:]
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
            continue
        c = glob[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := glob.find("]", i + 2)) != -1:
            body = glob[i + 1:end]
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("(?:.*/)?" + "".join(out))


def is_experimental(relative: Path) -> bool:
    """Whether a file's path below the logic root passes through an `Experimental` folder."""
    return any(part.lower() == EXPERIMENTAL_FOLDER for part in relative.parts[:-1])


def find_logic_files(paths: Iterable[str | Path], pattern: str = "*", *, experimental: bool = False) -> list[Path]:
    """Every `*.yaml` file given or below the given folders that `pattern` selects (`filter_regex`), sorted.

    Files below an `Experimental/` folder inside a given folder are left out unless `experimental`;
    a file named directly is always taken if its name matches. Sorting makes every later step independent
    of the order the filesystem lists files in.
    """
    wanted = filter_regex(pattern)
    found: set[Path] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for p in path.rglob("*.yaml"):
                rel = p.relative_to(path)
                if p.is_file() and (experimental or not is_experimental(rel)) and wanted.fullmatch(rel.as_posix()):
                    found.add(p)
        elif path.is_file():
            if wanted.fullmatch(path.name):
                found.add(path)
        else:
            raise LogicError("no such file or folder", Where(file=str(path)))
    return sorted(found, key=lambda p: p.as_posix())
