"""A logic file's architecture from its first few parser events, without reading the whole file.

Commands use it to file a logic file under its architecture before (and whether or not) the full read
succeeds, so one unreadable file is reported under its architecture and stops nothing else
(spec/rocm7_delta.md §1.1: every YAML below a logic root is a candidate, so non-logic YAML is expected).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.events import (
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
)

from tensile_lite.logic.stream import HAVE_LIBYAML

# The architecture is within the first handful of nodes; a file that has not named it by then is not a
# logic file as far as this scan is concerned.
_MAX_EVENTS = 4096


class _Done(Exception):
    pass


def sniff_arch(path: str | Path) -> str | None:
    """The `gfx...` name a logic file gives (list element 2 or `ArchitectureName`), None if not found
    early, or if the file is not readable YAML up to that point."""
    if not HAVE_LIBYAML:  # pragma: no cover - depends on how PyYAML was built
        return None
    from yaml._yaml import CParser

    try:
        with open(path, "rb") as fh:
            parser = CParser(fh)
            try:
                return _scan(_Events(parser.get_event))
            finally:
                parser.dispose()
    except (OSError, yaml.YAMLError, _Done, UnicodeDecodeError):
        return None


class _Events:
    def __init__(self, get: Any) -> None:
        self._get, self._count = get, 0

    def next(self) -> Any:
        self._count += 1
        if self._count > _MAX_EVENTS:
            raise _Done
        return self._get()


def _skip(events: _Events, ev: Any) -> None:
    """Skip the node that starts with `ev`."""
    depth = 1 if ev.__class__ in (MappingStartEvent, SequenceStartEvent) else 0
    while depth:
        cls = events.next().__class__
        depth += (cls in (MappingStartEvent, SequenceStartEvent)) - (cls in (MappingEndEvent, SequenceEndEvent))


def _arch_of(events: _Events, ev: Any) -> str | None:
    if ev.__class__ is ScalarEvent:
        return ev.value
    if ev.__class__ is MappingStartEvent:  # {Architecture: gfx90a, CUCount: 104}
        while (key := events.next()).__class__ is ScalarEvent:
            value = events.next()
            if key.value == "Architecture" and value.__class__ is ScalarEvent:
                return value.value
            _skip(events, value)
    return None


def _scan(events: _Events) -> str | None:
    events.next()  # stream start
    events.next()  # document start
    root = events.next()
    if root.__class__ is SequenceStartEvent:
        for _ in range(2):
            ev = events.next()
            if ev.__class__ is SequenceEndEvent:
                return None
            _skip(events, ev)
        return _arch_of(events, events.next())
    if root.__class__ is MappingStartEvent:
        while (key := events.next()).__class__ is not MappingEndEvent:
            value = events.next()
            if key.__class__ is ScalarEvent and key.value == "ArchitectureName":
                return _arch_of(events, value)
            _skip(events, key)
            _skip(events, value)
    return None
