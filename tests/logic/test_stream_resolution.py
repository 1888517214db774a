"""Property tests: scalars and nested structures resolve exactly as yaml.load(CSafeLoader) resolves them."""

from __future__ import annotations

import datetime

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tensile_lite.errors import LogicError
from tensile_lite.logic.stream import load
from tests.logic.identical import first_difference

BOOL_AND_NULL_WORDS = ["yes", "no", "true", "false", "on", "off", "null", "y", "n", "nul", "tru", "~"]


def _case_variants(word: str) -> list[str]:
    variants = [""]
    for c in word:
        variants = [v + x for v in variants for x in dict.fromkeys([c.lower(), c.upper()])]
    return variants


# Every case spelling of the YAML 1.1 keywords (and of near misses): only three spellings of each resolve.
KEYWORD_SPELLINGS = sorted({v for w in BOOL_AND_NULL_WORDS for v in _case_variants(w)})


@pytest.mark.parametrize("text", KEYWORD_SPELLINGS)
def test_every_keyword_spelling_resolves_as_yaml_load(text):
    _same_outcome(f"- {text}\n")
    _same_outcome(f"{text}: value\n")


NUMBER_LIKE = st.one_of(
    st.from_regex(r"\A[-+]?(0b[01_]{1,6}|0[0-9_]{1,6}|0o[0-7]{1,4}|0x[0-9a-fA-F_]{1,6}|0|[1-9][0-9_]{0,8})\Z"),
    st.from_regex(r"\A[-+]?[1-9][0-9_]{0,3}(:[0-6]?[0-9]){1,3}(\.[0-9_]{0,3})?\Z"),
    st.from_regex(r"\A[-+]?([0-9][0-9_]{0,4})?\.[0-9_]{0,4}([eE][-+]?[0-9]{1,3})?\Z"),
    st.from_regex(r"\A[-+]?[0-9]{1,4}[eE][-+]?[0-9]{1,3}\Z"),
    st.from_regex(r"\A[-+]?\.(inf|Inf|INF|iNf|nan|NaN|NAN|nAn)\Z"),
    st.from_regex(r"\A[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}([Tt ][0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]{0,6})?"
                  r"( ?(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)?\Z"),
)
NEAR_MISSES = st.text(alphabet="0123456789+-._:eExXoObB~nNuUlLyYsStTfF =<", max_size=12)
PLAIN_CANDIDATES = st.one_of(st.sampled_from(KEYWORD_SPELLINGS), NUMBER_LIKE, NEAR_MISSES)


def _same_outcome(text: str) -> None:
    """Both readers build the same value, or both refuse the text."""
    try:
        expected = yaml.load(text, Loader=yaml.CSafeLoader)
    except Exception:  # PyYAML itself lets ValueError, IndexError ... out for some bad tagged values
        with pytest.raises((yaml.YAMLError, LogicError)):
            load(text)
        return
    got = load(text)
    assert first_difference(got, expected) is None, (text, got, expected)


@settings(max_examples=300, deadline=None)
@given(PLAIN_CANDIDATES)
@example("0x_1F")
@example("1:30")
@example("-1:30.5")
@example("+.INF")
@example("1e5")
@example("1.0e+5")
@example("08")
@example("0o17")
@example("=")
@example("<<")
@example("")
@example("2002-02-30")
def test_plain_scalar_resolves_as_yaml_load(text):
    _same_outcome(f"- {text}\n")  # as a sequence item
    _same_outcome(f"{text}: value\n")  # as a map key, where `=` and `<<` mean something else
    _same_outcome(f"key: {text}\n")
    _same_outcome(f"[{text}, {{k: {text}}}]\n")  # in flow context


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["str", "int", "float", "bool", "null", "binary", "timestamp"]), PLAIN_CANDIDATES,
       st.sampled_from(["{}", "'{}'", '"{}"']))
def test_explicitly_tagged_scalar_as_yaml_load(tag, text, quoting):
    if "'" in quoting and text.startswith(" "):
        text = text.strip()
    _same_outcome(f"- !!{tag} {quoting.format(text)}\n")


KEYS = st.one_of(st.text(max_size=12), st.integers(), st.booleans(), st.none(),
                 st.floats(allow_nan=False), st.dates())
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.binary(max_size=16),
                    st.dates(), st.datetimes(min_value=datetime.datetime(1, 1, 1, 0, 0, 0, 1)))
STRUCTURES = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=5),
                                                           st.dictionaries(KEYS, inner, max_size=5)),
                          max_leaves=25)


class _NoAliasSafeDumper(yaml.SafeDumper):
    """safe_dump's representer and emitter; equal dates drawn twice are written out, not aliased."""

    def ignore_aliases(self, data):
        return True


@settings(max_examples=200, deadline=None)
@given(STRUCTURES, st.sampled_from([False, True, None]), st.booleans(), st.booleans(),
       st.integers(min_value=20, max_value=120), st.booleans())
def test_dumped_structures_load_as_yaml_load(data, flow, sort_keys, unicode, width, canonical):
    text = yaml.dump(data, Dumper=_NoAliasSafeDumper, default_flow_style=flow, sort_keys=sort_keys,
                     allow_unicode=unicode, width=width, canonical=canonical)
    expected = yaml.load(text, Loader=yaml.CSafeLoader)
    assert first_difference(load(text), expected) is None, text
    assert first_difference(load(text.encode("utf-8")), expected) is None, text
