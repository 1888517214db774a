"""Small logic files cut from the dev set: a few of a file's solutions, with its tables renumbered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def trim(doc: list[Any], keep: tuple[int, ...], change: dict[str, Any] | None = None) -> list[Any]:
    """Only the solutions at positions `keep` and the table rows naming them (renumbered)."""
    renumber = {old: new for new, old in enumerate(keep)}
    doc[5] = [doc[5][i] for i in keep]
    doc[7] = [[row[0], [renumber[row[1][0]], *row[1][1:]]] for row in doc[7] or () if row[1][0] in renumber]
    if change:
        for pt in [doc[4]] + [sol["ProblemType"] for sol in doc[5]]:
            pt.update(change)
    return doc


def write_trimmed(source: Path, dest: Path, keep: tuple[int, ...], change: dict[str, Any] | None = None) -> None:
    doc = yaml.load(source.read_text(), Loader=yaml.CSafeLoader)
    dest.write_text(yaml.dump(trim(doc, keep, change), Dumper=yaml.CSafeDumper))
