"""YAML loading, always with libyaml's C loader: the pure-Python loader is ~10x slower on 400 MB of logic."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tensile_lite.errors import LogicError, Where
from tensile_lite.logic.stream import Streamed, load


def load_yaml(path: Path, streamed: Streamed | None = None) -> Any:
    """The file's one document, as yaml.load(CSafeLoader) builds it; `streamed` hands one of its sequences
    over item by item (see `tensile_lite.logic.stream`)."""
    try:
        with open(path, "rb") as fh:
            return load(fh, str(path), streamed)
    except yaml.reader.ReaderError as exc:  # libyaml checks the encoding as it reads
        raise LogicError(f"not UTF-8 (or UTF-16) text: byte 0x{exc.character:02x} at offset {exc.position} "
                         f"({exc.reason})" if isinstance(exc.character, int) else f"not readable text: {exc}",
                         Where(file=str(path))) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        pos = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise LogicError(f"not valid YAML: {pos}{exc.problem or exc}", Where(file=str(path))) from None
    except yaml.YAMLError as exc:
        raise LogicError(f"not valid YAML: {exc}", Where(file=str(path))) from None
    except OSError as exc:
        raise LogicError(f"cannot read: {exc.strerror or exc}", Where(file=str(path))) from None
