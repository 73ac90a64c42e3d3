"""The tokens a line is painted with (`line_tokens.line_ranges`, which reads only the tokens near the
line) are those a plain reading of every token gives it: moved through the edits made since the
result, clipped to the line, with boundaries inside a grapheme cluster moved to its end."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from tokexplorer.core.positions import Edit
from tokexplorer.gui.editor.line_tokens import line_ranges, snap_to_clusters
from tokexplorer.server.tokenized import DROPPED

from .helpers import tokenized_of

PIECES = ["a", "b", " ", "the ", "\n", "é", "e\u0301", "日本", "👩🏽\u200d🚀", "🇯🇵", "12", "'s", "<|endoftext|>"]
RESULTS: dict = {}


def result_of(name: str, text: str):
    if (name, text) not in RESULTS:
        RESULTS[(name, text)] = tokenized_of(name, text, policy="none")
    return RESULTS[(name, text)]


def every_token(result, edits, lo, hi, text):
    """The plain reading: every token and dropped span moved through the edits, kept where it meets
    [lo, hi)."""
    spans = list(zip(result.starts16.tolist(), result.ends16.tolist(), result.colours.tolist(),
                     result.flags.tolist()))
    if result.dropped16 is not None:
        spans += [(s, t, 0, DROPPED) for s, t in result.dropped16.tolist()]
    ranges = []
    for s, t, c, f in spans:
        for e in edits:
            s, t = e.start(s), e.end(t)
        if min(t, hi) > max(s, lo):
            ranges.append((max(s, lo), min(t, hi), c, f))
    return snap_to_clusters(lo, text, ranges)


@st.composite
def screens(draw):
    text = "".join(draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=30)))
    name = draw(st.sampled_from(["gpt2", "o200k_base", "llama-sp"]))
    length = len(text.encode("utf-16-le")) // 2
    edits = []
    for _ in range(draw(st.integers(0, 3))):
        position = draw(st.integers(0, length))
        removed = draw(st.integers(0, length - position))
        added = draw(st.integers(0, 5))
        edits.append(Edit(position, removed, added))
        length += added - removed
    cuts = sorted(draw(st.lists(st.integers(0, length), min_size=2, max_size=8)))
    return name, text, edits, length, cuts


@settings(max_examples=150, deadline=None)
@given(screens())
def test_each_line_gets_the_ranges_of_a_reading_of_every_token(screen):
    name, text, edits, length, cuts = screen
    result = result_of(name, text)
    units = text.encode("utf-16-le")
    for lo, hi in zip(cuts, cuts[1:]):
        # the line's own text where nothing was edited (its clusters matter), else ASCII of its length
        line = units[2 * lo:2 * hi].decode("utf-16-le", errors="replace") if not edits else "x" * (hi - lo)
        if len(line.encode("utf-16-le")) // 2 != hi - lo:  # a cut inside an astral character
            line = "x" * (hi - lo)
        assert line_ranges(result, edits, lo, hi, line) == every_token(result, edits, lo, hi, line)


def test_lines_without_edits_read_as_every_token():
    text = "The cat sat.\nÉtude e\u0301 日本語 👩🏽\u200d🚀 done\n" * 3
    result = result_of("cl100k_base", text)
    units = text.encode("utf-16-le")
    lines, lo = [], 0
    for part in text.split("\n")[:-1]:
        hi = lo + len(part.encode("utf-16-le")) // 2
        lines.append((lo, hi))
        lo = hi + 1
    seen = 0
    for lo, hi in lines:
        line = units[2 * lo:2 * hi].decode("utf-16-le")
        got = line_ranges(result, [], lo, hi, line)
        assert got == every_token(result, [], lo, hi, line)
        seen += len(got)
    assert seen >= 30 and any(cut is not None for *_, cut in got)  # a boundary inside a cluster, marked
