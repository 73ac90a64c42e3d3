"""`loads_in_steps` gives what `json.loads` gives: the same values, and a ValueError for the same
texts (hypothesis, against the library)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokexplorer.core.json_steps import loads_in_steps
from tokexplorer.core.registry import TEKKEN, parse_tekken

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=20)


@given(value=VALUES, depth=st.integers(0, 4), indent=st.sampled_from([None, 0, 2, "\t"]),
       pad=st.sampled_from(["", " ", "\n \r\t"]))
def test_the_values_of_json_loads(value, depth, indent, pad):
    text = pad + json.dumps(value, indent=indent, ensure_ascii=False) + pad
    assert loads_in_steps(text, depth) == json.loads(text)


@given(value=VALUES, depth=st.integers(0, 4), cut=st.integers(0, 200), junk=st.sampled_from(
    ["", ",", "]", "}", ":", "x", "1", '"', "[", "{", " ", ",]", '{"a" 1}', "{1: 2}"]))
def test_refuses_what_json_loads_refuses(value, depth, cut, junk):
    text = json.dumps(value)
    text = text[:cut] + junk + text[cut:]  # a character or a few in, anywhere
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            loads_in_steps(text, depth)
    else:
        assert loads_in_steps(text, depth) == expected


def test_tekken_reads_as_with_json_loads():
    data = TEKKEN.read()
    ranks, pattern, specials = parse_tekken(data, source="tekken")
    spec = json.loads(data)
    assert pattern == spec["config"]["pattern"] and len(specials) == spec["config"]["default_num_special_tokens"]
    assert len(ranks) == spec["config"]["default_vocab_size"] - len(specials)
