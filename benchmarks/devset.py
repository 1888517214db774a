"""The dev set of real logic files in ../shared: where it is, each file's architecture, and subsets of it."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import yaml

try:
    from yaml import CSafeLoader as SafeLoader
except ImportError:  # pure-Python PyYAML still works, only slower
    from yaml import SafeLoader  # type: ignore[assignment]

_DEFAULT_SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def shared_root() -> Path:
    return Path(os.environ.get("TENSILE_LITE_SHARED", _DEFAULT_SHARED)).resolve()


def use_custom_kernels() -> None:
    """Builds of the dev set find the custom kernels it names in ../shared/custom_kernels (through the
    environment, which the measured build processes inherit), unless a folder is chosen already."""
    from tensile_lite.custom import ENV

    folder = shared_root() / "custom_kernels"
    if folder.is_dir():
        os.environ.setdefault(ENV, str(folder))


def logic_root() -> Path:
    """The dev set's logic tree (the folder hipBLASLt calls asm_full)."""
    return shared_root() / "logic" / "asm_full"


def logic_files(root: Path | None = None) -> list[Path]:
    root = logic_root() if root is None else root
    return sorted(root.rglob("*.yaml")) if root.is_dir() else []


def _events(path: Path) -> Iterator[yaml.Event]:
    with open(path, "rb") as f:
        yield from yaml.parse(f, Loader=SafeLoader)


def _skip_node(first: yaml.Event, events: Iterator[yaml.Event]) -> None:
    depth = 1 if isinstance(first, (yaml.SequenceStartEvent, yaml.MappingStartEvent)) else 0
    while depth:
        ev = next(events)
        if isinstance(ev, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            depth += 1
        elif isinstance(ev, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            depth -= 1


def _mapping_value(events: Iterator[yaml.Event], key: str) -> str | None:
    """Within a mapping whose start event was just read: the scalar value of key, or None."""
    while True:
        ev = next(events)
        if isinstance(ev, yaml.MappingEndEvent):
            return None
        value = next(events)
        if isinstance(ev, yaml.ScalarEvent) and ev.value == key and isinstance(value, yaml.ScalarEvent):
            return value.value
        _skip_node(value, events)


def logic_architecture(path: Path) -> str | None:
    """The architecture a logic file is for, read from the event stream so the solutions are never loaded.

    List form: element 2 is the name or a mapping with `Architecture`. Mapping form: key `ArchitectureName`.
    """
    events = _events(path)
    try:
        for ev in events:
            if isinstance(ev, yaml.MappingStartEvent):
                return _mapping_value(events, "ArchitectureName")
            if isinstance(ev, yaml.SequenceStartEvent):
                for _ in range(2):
                    _skip_node(next(events), events)
                item = next(events)
                if isinstance(item, yaml.ScalarEvent):
                    return item.value
                if isinstance(item, yaml.MappingStartEvent):
                    return _mapping_value(events, "Architecture")
                return None
    except (StopIteration, yaml.YAMLError, OSError):
        return None
    return None


def architectures(files: Sequence[Path]) -> dict[str, list[Path]]:
    """Files grouped by architecture (gfx9 before gfx11: shorter names first); unreadable files left out."""
    groups: dict[str, list[Path]] = {}
    for path in files:
        arch = logic_architecture(path)
        if arch:
            groups.setdefault(arch, []).append(path)
    return dict(sorted(groups.items(), key=lambda kv: (len(kv[0]), kv[0])))


def solution_count(path: Path) -> int:
    with open(path, "rb") as f:
        doc = yaml.load(f, Loader=SafeLoader)
    if isinstance(doc, list) and len(doc) > 5 and isinstance(doc[5], list):
        return len(doc[5])
    if isinstance(doc, dict) and isinstance(doc.get("Solutions"), list):
        return len(doc["Solutions"])
    return 0


def pick_share(weights: Mapping[Path, int], fraction: float) -> list[Path]:
    """Files whose summed weight comes closest to fraction of the total without going over when possible.

    Greedy from the heaviest file (ties by path, so the pick is deterministic); a file heavier than the
    whole target is taken only when nothing else was, so no share is ever empty.
    """
    total = sum(weights.values())
    target = total * fraction
    picked: list[Path] = []
    got = 0
    for path, weight in sorted(weights.items(), key=lambda kv: (-kv[1], str(kv[0]))):
        if got + weight <= target + 1e-9:
            picked.append(path)
            got += weight
    if not picked and weights:
        picked.append(min(weights.items(), key=lambda kv: (kv[1], str(kv[0])))[0])
    return sorted(picked)
