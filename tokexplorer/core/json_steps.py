"""`json.loads` in steps: a big vocabulary file parsed without holding the interpreter lock long.

subtle: `json.loads` is one call into C: parsing Tekken's 19 MB vocabulary held the lock 155 ms,
during which a window whose worker thread loads it cannot repaint. Here the outer containers, down
to a given depth, are walked in Python, and each container below is parsed a block of its
elements at a time (`_in_blocks`: one short `raw_decode` call per block of about BLOCK
characters), so other threads run between blocks. It gives what `json.loads` gives (the same
values, a ValueError for text that is not one JSON value).

It reads JSON only; what a file's values mean is its format's reader's business.
"""

from __future__ import annotations

import json
import re

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()
BLOCK = 1 << 16  # characters of a container parsed per call (about a millisecond)


def loads_in_steps(text: str, depth: int = 2):
    """`json.loads(text)`, the containers of the first `depth` levels walked a value at a time,
    those below them parsed a block at a time.

    >>> loads_in_steps('{"config": {"n": 2}, "vocab": [{"rank": 0}, {"rank": 1}]}')
    {'config': {'n': 2}, 'vocab': [{'rank': 0}, {'rank': 1}]}
    >>> loads_in_steps('[1, 2] x')
    Traceback (most recent call last):
    ...
    ValueError: extra data at character 7
    """
    value, end = _value(text, _SPACE.match(text, 0).end(), depth)
    end = _SPACE.match(text, end).end()
    if end != len(text):
        raise ValueError(f"extra data at character {end}")
    return value


def _value(text: str, i: int, depth: int):
    """The value starting at `i` (no space before it) and the index just past it."""
    opener = text[i:i + 1]
    if opener not in ("[", "{"):
        return _DECODER.raw_decode(text, i)
    if depth <= 0:
        return _in_blocks(text, i)
    closer = "]" if opener == "[" else "}"
    out: list | dict = [] if opener == "[" else {}
    i = _SPACE.match(text, i + 1).end()
    if text.startswith(closer, i):
        return out, i + 1
    while True:
        if opener == "{":
            key, i = _DECODER.raw_decode(text, i)
            if not isinstance(key, str):
                raise ValueError(f"an object's key must be a string, at character {i}")
            i = _SPACE.match(text, i).end()
            if not text.startswith(":", i):
                raise ValueError(f"expected ':' at character {i}")
            i = _SPACE.match(text, i + 1).end()
            out[key], i = _value(text, i, depth - 1)
        else:
            item, i = _value(text, i, depth - 1)
            out.append(item)
        i = _SPACE.match(text, i).end()
        if text.startswith(",", i):
            i = _SPACE.match(text, i + 1).end()
        elif text.startswith(closer, i):
            return out, i + 1
        else:
            raise ValueError(f"expected ',' or {closer!r} at character {i}")


def _in_blocks(text: str, i: int, block: int = BLOCK, first: int = 64):
    """The container starting at `i` and the index just past it, parsed a block of elements at a
    time: the text up to a comma, closed, is one `raw_decode`.

    subtle: a comma may be inside a string or a nested element; the block before it then has an
    unclosed string or bracket and fails to parse, and the block grows to the next comma (after a
    few tries, to one twice as far: a long string full of commas costs a few parses, not one per
    comma). A block that parses has its comma between two of the container's elements. The first
    block is about `first` characters and they double up to `block`, so a small container costs
    one short parse.

    >>> _in_blocks('{"a": [1, 2], "b,": 3}, 4', 0, block=4, first=1)
    ({'a': [1, 2], 'b,': 3}, 22)
    """
    opener = text[i]
    closer = "]" if opener == "[" else "}"
    out: list | dict = [] if opener == "[" else {}
    start = i + 1  # just past the opener or a separating comma
    comma = text.find(",", start + first)
    tries = 0
    while True:
        if comma < 0:  # the rest of the text: the container must close in it
            value, end = _DECODER.raw_decode(opener + text[start:])
            closed = True
        else:
            piece = opener + text[start:comma] + closer
            try:
                value, end = _DECODER.raw_decode(piece)
            except ValueError:  # inside an element: the next comma, or (after a few) one twice as far
                tries += 1
                comma = text.find(",", comma + 1 if tries < 8 else start + 2 * (comma - start))
                continue
            closed = end < len(piece)  # the container's own closer came before the comma
        if not value and (out or not closed):  # an empty element ("[1,,2]", "[1,]", "[,]")
            raise ValueError(f"expected a value at character {start}")
        if isinstance(out, list):
            out.extend(value)
        else:
            out.update(value)
        if closed:
            return out, start + end - 1
        step = min(2 * (comma - start), block)
        start, tries = comma + 1, 0
        comma = text.find(",", start + step)
