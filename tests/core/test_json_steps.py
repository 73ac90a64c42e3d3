"""`loads_in_steps` gives what `json.loads` gives: the same values, and a ValueError for the same
texts (hypothesis, against the library)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokexplorer.core.json_steps import _in_blocks, loads_in_steps
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


TRICKY = st.text(alphabet=',[]{}":\\ ab1', max_size=6)  # commas and brackets inside strings
CONTAINERS = st.lists(VALUES | TRICKY, max_size=30) | st.dictionaries(TRICKY, VALUES | TRICKY, max_size=30)


@given(value=CONTAINERS, first=st.integers(1, 9), block=st.integers(1, 40),
       indent=st.sampled_from([None, 1]), after=st.sampled_from(["", ", 1", "]", ' , "x": [2]}']))
def test_a_container_read_in_blocks_is_json_loads(value, first, block, indent, after):
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    assert _in_blocks(text + after, 0, block, first) == (json.loads(text), len(text))


@given(value=CONTAINERS, first=st.integers(1, 9), block=st.integers(1, 40), cut=st.integers(1, 300),
       junk=st.sampled_from([",", ", ,", "]", "}", ":", "x", '"', "[", "{", ",]", ",}", '{"a" 1}']))
def test_a_container_read_in_blocks_refuses_what_json_loads_refuses(value, first, block, cut, junk):
    text = json.dumps(value)
    cut %= len(text)  # inside the container
    text = text[:cut] + junk + text[cut:]
    try:
        expected, end = json.JSONDecoder().raw_decode(text)
    except ValueError:
        with pytest.raises(ValueError):
            _in_blocks(text, 0, block, first)
    else:
        assert _in_blocks(text, 0, block, first) == (expected, end)


@pytest.mark.parametrize("text", ["[1,]", '{"a": 1,}', "[1,,2]", "[,]", "[1 2]", "[1, 2", '{"a": 1 "b": 2}',
                                  "[[1, 2], [3,]]", '{"a,": [","], "b": 1,}'])
@pytest.mark.parametrize("first", [1, 3, 64])
def test_a_comma_without_a_value_is_refused_in_blocks(text, first):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        _in_blocks(text, 0, 4, first)


def test_tekken_reads_as_with_json_loads():
    data = TEKKEN.read()
    ranks, pattern, specials = parse_tekken(data, source="tekken")
    spec = json.loads(data)
    assert pattern == spec["config"]["pattern"] and len(specials) == spec["config"]["default_num_special_tokens"]
    assert len(ranks) == spec["config"]["default_vocab_size"] - len(specials)
