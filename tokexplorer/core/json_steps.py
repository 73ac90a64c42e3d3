"""`json.loads` in steps: a big vocabulary file parsed without holding the interpreter lock long.

subtle: `json.loads` is one call into C: parsing Tekken's 19 MB vocabulary held the lock 155 ms,
during which a window whose worker thread loads it cannot repaint. Here the outer containers, down
to a given depth, are walked in Python and each value below is one short `raw_decode` call, so
other threads run between values. It is about twice as slow in all, and gives what `json.loads`
gives (the same values, a ValueError for text that is not one JSON value).

It reads JSON only; what a file's values mean is its format's reader's business.
"""

from __future__ import annotations

import json
import re

_SPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def loads_in_steps(text: str, depth: int = 2):
    """`json.loads(text)`, the containers of the first `depth` levels walked a value at a time.

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
    if depth <= 0 or opener not in ("[", "{"):
        return _DECODER.raw_decode(text, i)
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
