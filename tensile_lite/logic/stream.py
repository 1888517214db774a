"""Build a YAML document straight from libyaml's parser events, handing one root sequence over item by item.

`yaml.load` composes a node tree of the whole file (about 34x its text for a logic file) before it builds any
value. Here values are built from the events as they arrive, and the sequence named by `Streamed` (a logic
file's solutions) is given to a consumer as an iterator, so each solution can become the model and its raw
dict be dropped before the next one is parsed.

The result equals `yaml.load(..., Loader=yaml.CSafeLoader)`, types included: plain scalars are matched
against CSafeLoader's own implicit-resolver table (YAML 1.1) and built by SafeConstructor's own scalar
constructors, so the two readers cannot drift apart. Anchors, aliases, merge keys and tags beyond the plain
YAML types are refused with a position: logic files have none, and aliases would pin parts of the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import IO, Any

import attrs
import yaml
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from tensile_lite.errors import LogicError, Where

try:
    from yaml._yaml import CParser
    from yaml.cyaml import CSafeLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    HAVE_LIBYAML = False
else:
    HAVE_LIBYAML = True

LIBYAML_MISSING = ("PyYAML was built without libyaml (yaml.CSafeLoader is missing); reinstall it with libyaml, "
                   "e.g. `apt-get install libyaml-dev && pip install --force-reinstall --no-binary pyyaml "
                   "pyyaml`, or use the PyPI wheel")

_STR = "tag:yaml.org,2002:str"
_SEQ_TAGS = frozenset({None, "!", "tag:yaml.org,2002:seq"})
_MAP_TAGS = frozenset({None, "!", "tag:yaml.org,2002:map"})
_SCALAR_TAGS = tuple(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "binary", "timestamp"))

# SafeConstructor's scalar constructors only read the node's value and class-level tables, so one instance
# serves every parse.
_CONSTRUCTOR = SafeConstructor()
_CONSTRUCTORS: dict[str, Callable[[SafeConstructor, ScalarNode], Any]] = {
    tag: SafeConstructor.yaml_constructors[tag] for tag in _SCALAR_TAGS}


def _resolver_table() -> dict[str | None, tuple[tuple[str, re.Pattern[str]], ...]]:
    """CSafeLoader's implicit resolvers per first character (None: the catch-all ones), the catch-all
    ones appended, in its order."""
    if not HAVE_LIBYAML:  # pragma: no cover
        return {}
    table = CSafeLoader.yaml_implicit_resolvers
    wildcard = tuple(table.get(None, ()))
    return {first: (*entries, *wildcard) for first, entries in table.items() if first is not None} | {
        None: wildcard}


_RESOLVERS = _resolver_table()
_NO_RESOLVERS = _RESOLVERS.get(None, ())

# Resolved plain scalars are cached per parse: the dev set's 1.26 million plain scalars are at most 1,418
# distinct spellings per file (keys, 0, 1, true ...). Long values are rarely repeated (solution names);
# the two limits keep the cache to a few hundred KiB whatever the file.
_CACHE_LIMIT = 1024
_CACHE_MAX_LEN = 64
_MISS = object()

# Limits against hostile input. Logic files nest 5 levels deep and their longest scalars are solution names
# of a few hundred bytes; without limits a deeply nested file ends in a RecursionError and one huge scalar
# in memory exhaustion. (Aliases, the other classic, are refused outright: see `node`.)
MAX_DEPTH = 64
MAX_SCALAR = 1 << 20  # bytes


@attrs.frozen(slots=True)
class Streamed:
    """Which sequence of the root to hand over item by item, and to whom.

    The sequence at position `index` of a root sequence, or under `key` of a root mapping, is not built:
    `consume(head, items)` is called when the parser reaches it, with the root built so far (`head`, the
    list or dict itself) and an iterator that builds each item as it is asked for. Whatever `consume` returns
    takes the sequence's place in the root; items it leaves unread are still parsed (and checked), then
    dropped. If it raises, the rest of the file is parsed first, so that a syntax error further on is
    reported instead, as yaml.load would. The iterator is only valid during the call.
    """

    consume: Callable[[Any, Iterator[Any]], Any]
    index: int | None = None
    key: str | None = None


def load(source: IO[bytes] | IO[str] | bytes | str, name: str = "<yaml>", streamed: Streamed | None = None) -> Any:
    """The single YAML document in `source`, as `yaml.load(source, CSafeLoader)` would build it.

    Errors libyaml reports (syntax, encoding) are raised as PyYAML raises them; what this reader refuses
    (anchors, aliases, merge keys, other tags, a second document) is a LogicError naming `name` and the
    line and column.
    """
    if not HAVE_LIBYAML:  # pragma: no cover - depends on how PyYAML was built
        raise LogicError(LIBYAML_MISSING, Where(file=name))
    parser = CParser(source)
    try:
        return _Builder(parser.get_event, name).document(streamed)
    finally:
        parser.dispose()


def _resolve(value: str) -> str:
    """The tag CSafeLoader gives an untagged plain scalar (same table, same order, first match wins)."""
    for tag, regexp in _RESOLVERS.get(value[:1], _NO_RESOLVERS):
        if regexp.match(value):
            return tag
    return _STR


class _Builder:
    """Values from one parser's events; the hot loops read each event's attributes once."""

    __slots__ = ("_cache", "_depth", "_get", "_name")

    def __init__(self, get_event: Callable[[], Any], name: str) -> None:
        self._get = get_event
        self._name = name
        self._cache: dict[str, Any] = {}
        self._depth = 0

    def _enter(self, start: Any) -> None:
        """One level deeper; refused past MAX_DEPTH (a collection of a collection of ... is not a logic file)."""
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise self._error(start, f"nested more than {MAX_DEPTH} levels deep; logic files nest a few levels")

    # -- document and root ------------------------------------------------------------------------------
    def document(self, streamed: Streamed | None) -> Any:
        get = self._get
        get()  # StreamStartEvent
        if get().__class__ is StreamEndEvent:
            return None  # an empty stream, like yaml.load
        root = self._root(get(), streamed)
        get()  # DocumentEndEvent
        after = get()
        if after.__class__ is not StreamEndEvent:
            raise self._error(after, "expected a single document in the stream, but found another document",
                              "not valid YAML")
        return root

    def _root(self, start: Any, streamed: Streamed | None) -> Any:
        cls = start.__class__
        if streamed is not None and cls is SequenceStartEvent and streamed.index is not None:
            self._check_collection(start, _SEQ_TAGS)
            out: list[Any] = []
            while (ev := self._get()).__class__ is not SequenceEndEvent:
                if len(out) == streamed.index and ev.__class__ is SequenceStartEvent:
                    out.append(self._hand_over(ev, out, streamed.consume))
                else:
                    out.append(self.node(ev))
            return out
        if streamed is not None and cls is MappingStartEvent and streamed.key is not None:
            self._check_collection(start, _MAP_TAGS)
            mapping: dict[Any, Any] = {}
            while (kev := self._get()).__class__ is not MappingEndEvent:
                key = self._key(kev)
                ev = self._get()
                if key == streamed.key and ev.__class__ is SequenceStartEvent:
                    value = self._hand_over(ev, mapping, streamed.consume)
                else:
                    value = self.node(ev)
                self._store(mapping, key, value, kev)
            return mapping
        return self.node(start)

    def _hand_over(self, start: Any, head: Any, consume: Callable[[Any, Iterator[Any]], Any]) -> Any:
        self._check_collection(start, _SEQ_TAGS)
        items = self._items()
        try:
            result = consume(head, items)
        except yaml.YAMLError:
            raise  # a syntax error while reading the items: nothing further can be parsed
        except Exception:
            # yaml.load reports a syntax error anywhere in the file before any complaint about its content,
            # so the rest is still parsed (not built): a syntax error there wins over the consumer's error.
            self._drain()
            raise
        for _ in items:  # what the consumer left unread must still be parsed to stay in step
            pass
        return result

    def _drain(self) -> None:
        get = self._get
        while (ev := get()) is not None and ev.__class__ is not StreamEndEvent:
            pass

    def _items(self) -> Iterator[Any]:
        get, node = self._get, self.node
        while (ev := get()).__class__ is not SequenceEndEvent:
            yield node(ev)

    # -- nodes ------------------------------------------------------------------------------------------
    def node(self, ev: Any) -> Any:
        cls = ev.__class__
        if cls is ScalarEvent:
            return self.scalar(ev)
        if cls is MappingStartEvent:
            return self.mapping(ev)
        if cls is SequenceStartEvent:
            return self.sequence(ev)
        if cls is AliasEvent:
            raise self._error(ev, f"aliases (*{ev.anchor}) are not supported in logic files")
        raise self._error(ev, f"unexpected {cls.__name__}", "not valid YAML")  # pragma: no cover

    def scalar(self, ev: Any) -> Any:
        if ev.anchor is not None:
            raise self._error(ev, f"anchors (&{ev.anchor}) are not supported in logic files")
        if len(ev.value) > MAX_SCALAR:
            raise self._too_long(ev)
        if ev.implicit[0]:  # untagged plain, or the non-specific tag `!`: resolved like CSafeLoader
            value = self._cache.get(ev.value, _MISS)
            return self._plain(ev) if value is _MISS else value
        tag = ev.tag
        if tag is None or tag == "!" or tag == _STR:
            return ev.value
        return self._construct(tag, ev)

    def sequence(self, start: Any) -> list[Any]:
        self._check_collection(start, _SEQ_TAGS)
        self._enter(start)
        out: list[Any] = []
        append, get, cache, node = out.append, self._get, self._cache, self.node
        while True:
            ev = get()
            cls = ev.__class__
            if cls is ScalarEvent and ev.implicit[0] and ev.anchor is None:
                value = cache.get(ev.value, _MISS)
                append(self._plain(ev) if value is _MISS else value)
            elif cls is SequenceEndEvent:
                self._depth -= 1
                return out
            else:
                append(node(ev))

    def mapping(self, start: Any) -> dict[Any, Any]:
        self._check_collection(start, _MAP_TAGS)
        self._enter(start)
        out: dict[Any, Any] = {}
        get, cache, node = self._get, self._cache, self.node
        while True:
            kev = get()
            cls = kev.__class__
            if cls is MappingEndEvent:
                self._depth -= 1
                return out
            if cls is ScalarEvent and kev.implicit[0] and kev.anchor is None:
                key = cache.get(kev.value, _MISS)
                if key is _MISS:
                    key = self._plain_key(kev)
            else:
                key = node(kev)
            ev = get()
            if ev.__class__ is ScalarEvent and ev.implicit[0] and ev.anchor is None:
                value = cache.get(ev.value, _MISS)
                if value is _MISS:
                    value = self._plain(ev)
            else:
                value = node(ev)
            try:
                out[key] = value
            except TypeError:
                raise self._unhashable(kev, key) from None

    def _key(self, ev: Any) -> Any:
        if ev.__class__ is ScalarEvent and ev.implicit[0] and ev.anchor is None:
            key = self._cache.get(ev.value, _MISS)
            return self._plain_key(ev) if key is _MISS else key
        return self.node(ev)

    def _store(self, mapping: dict[Any, Any], key: Any, value: Any, kev: Any) -> None:
        try:
            mapping[key] = value
        except TypeError:
            raise self._unhashable(kev, key) from None

    def _unhashable(self, kev: Any, key: Any) -> LogicError:
        return self._error(kev, f"found an unhashable map key ({type(key).__name__})", "not valid YAML")

    # -- scalars ----------------------------------------------------------------------------------------
    def _plain(self, ev: Any) -> Any:
        """Resolve and build a plain scalar the cache did not know, then remember it."""
        value = ev.value
        if len(value) > MAX_SCALAR:  # only cache misses come here, and a long value always misses
            raise self._too_long(ev)
        tag = _resolve(value)
        result = value if tag == _STR else self._construct(tag, ev)
        if len(value) <= _CACHE_MAX_LEN:
            cache = self._cache
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            cache[value] = result
        return result

    def _plain_key(self, ev: Any) -> Any:
        """A plain map key: as a value, except the two key-only spellings of YAML 1.1."""
        value = ev.value
        if value == "=":  # the `value` key type: SafeConstructor reads it as the string "="
            return value
        if value == "<<":
            raise self._error(ev, "merge keys (<<) are not supported in logic files")
        return self._plain(ev)

    def _construct(self, tag: str, ev: Any) -> Any:
        constructor = _CONSTRUCTORS.get(tag)
        if constructor is None:
            raise self._error(ev, f"the tag {tag!r} is not supported in logic files (only plain YAML types are)")
        try:
            return constructor(_CONSTRUCTOR, ScalarNode(tag, ev.value, ev.start_mark, ev.end_mark))
        except Exception as exc:  # SafeConstructor fails on bad tagged values with whatever it hits first
            raise self._error(ev, f"cannot read {ev.value!r} as {tag}: {exc}", "not valid YAML") from None

    def _check_collection(self, start: Any, allowed: frozenset[str | None]) -> None:
        if start.anchor is not None:
            raise self._error(start, f"anchors (&{start.anchor}) are not supported in logic files")
        if start.tag not in allowed:
            raise self._error(start, f"the tag {start.tag!r} is not supported in logic files "
                                     "(only plain YAML types are)")

    def _too_long(self, ev: Any) -> LogicError:
        return self._error(ev, f"a scalar of {len(ev.value):,} characters (the limit is {MAX_SCALAR:,}); "
                               "logic files hold names and numbers")

    def _error(self, ev: Any, message: str, kind: str = "unsupported YAML") -> LogicError:
        mark = ev.start_mark
        return LogicError(f"{kind}: line {mark.line + 1}, column {mark.column + 1}: {message}",
                          Where(file=self._name))
