"""`tokexplorer lesson bpe`: the lecture's BPE by hand from the command line. On the lecture's own
texts (read from its notebook in ../shared/seeds, which we may not ship) it prints the notebook's
numbers; on our own texts, values worked out by hand."""

from __future__ import annotations

import io
import json
import re
import sys

import pytest

from tokexplorer.cli.main import main
from tokexplorer.core.analysis.bpe_by_hand import BpeByHand, pair_counts, sorted_counts


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def notebook(seeds) -> str:
    """The first lecture notebook (the one that builds the GPT tokenizer)."""
    return seeds["000"]


@pytest.fixture(scope="module")
def opening(lecture_article) -> str:
    """The article's opening, the lecture's first text ('Ｕｎｉｃｏｄｅ! ...' to '... Unicode’s inception.').
    subtle: its copy in the notes lost the zero-width non-joiners between the flag letters, which
    the notebook's byte list (226, 128, 140) and counts keep; the article's copy has them."""
    start = lecture_article.index("Ｕｎｉｃｏｄｅ!")
    end = lecture_article.index("Unicode’s inception.") + len("Unicode’s inception.")
    return lecture_article[start:end]


def test_lecture_first_table_and_merge_on_the_opening(capsys, tmp_path, notebook, opening):
    """The notebook prints 'length: 533' (characters), the sorted pair counts starting
    [(20, (101, 32)), (15, (240, 159)), (12, (226, 128)), (12, (105, 110)), ...], max() picks
    (101, 32), and merging it into 256 gives a list starting as printed."""
    assert len(opening) == int(re.search(r"length: (\d+)\n---\n\[239", notebook).group(1)) == 533
    printed = re.search(r"^\[\(20, \(101, 32\)\).*$", notebook, re.M).group(0)
    table = [(int(c), (int(a), int(b))) for c, a, b in re.findall(r"\((\d+), \((\d+), (\d+)\)\)", printed)]
    assert len(table) > 50  # the notes cut the printed list; every whole entry is compared
    source = tmp_path / "opening.txt"
    source.write_text(opening, "utf-8")
    code, out, _ = run(capsys, "lesson", "bpe", "--file", source, "--merges", 1, "--json")
    answer = json.loads(out)
    assert code == 0 and answer["bytes"] == 616 and answer["tokens"] == 596
    step = answer["steps"][0]
    assert step["pair"] == [101, 32] and step["count"] == 20 and step["new_id"] == 256 and step["length"] == 596
    assert [(c, tuple(p)) for c, p in step["top"]] == table[:10]
    assert sorted_counts(pair_counts(list(opening.encode("utf-8"))))[:len(table)] == table
    # tokens2, as far as the notes kept it
    cell = notebook[notebook.index("tokens2 = merge(tokens, top_pair, 256)"):]
    tokens2 = [int(x) for x in re.search(r"^\[(239, 188, 181, [\d, ]*\d)", cell, re.M).group(1).split(", ")]
    lesson = BpeByHand(opening)
    lesson.step()
    assert lesson.sequence(len(tokens2)) == tokens2 and 256 in tokens2


def test_lecture_twenty_merges_on_the_article(capsys, tmp_path, notebook, lecture_article):
    """'merging (101, 32) into a new token 256' ... '(259, 256) into a new token 275', then
    'tokens length: 24597', 'ids length: 19438', 'compression ratio: 1.27X'."""
    merges = [[int(a), int(b)] for a, b in re.findall(r"merging \((\d+), (\d+)\) into a new token", notebook)][:20]
    assert len(merges) == 20
    source = tmp_path / "article.txt"
    source.write_text(lecture_article, "utf-8")
    code, out, _ = run(capsys, "lesson", "bpe", "--file", source, "--merges", 20, "--json")
    answer = json.loads(out)
    assert code == 0 and [s["pair"] for s in answer["steps"]] == merges
    assert [s["new_id"] for s in answer["steps"]] == list(range(256, 276))
    assert (answer["bytes"], answer["tokens"]) == (24597, 19438) == (
        int(re.search(r"tokens length: (\d+)", notebook).group(1)), int(re.search(r"ids length: (\d+)", notebook).group(1)))
    assert f"{answer['ratio']:.2f}X" == re.search(r"compression ratio: ([\d.]+X)", notebook).group(1) == "1.27X"
    assert answer["steps"][-1]["length"] == 19438 and all(len(s["top"]) == 10 for s in answer["steps"])
    code, out, _ = run(capsys, "lesson", "bpe", "--file", source, "--merges", 20)
    assert code == 0 and out.rstrip().endswith("24597 bytes -> 19438 tokens, compression ratio 1.27")
    # step 17 of the lecture: (121, 32) 'y␣' and (46, 32) '.␣' both occur 154 times; y␣ comes first
    assert re.search(r"^ +17 +\(121, 32\) +y \+ ␣ +154 +272 .*first met of 2$", out, re.M)


def test_by_hand_table_and_ties(capsys):
    """'ab cd ab cd' (a b ␣ c d ␣ a b ␣ c d, 11 bytes): ab, b␣, ␣c, cd twice each. minbpe merges ab
    (met first) into 256 (9 left); sorted() lists cd first. Then 256␣ (met first of 256␣, ␣c, cd)
    into 257 (7 left)."""
    code, out, _ = run(capsys, "lesson", "bpe", "ab cd ab cd", "--merges", 2, "--json")
    assert code == 0
    assert json.loads(out) == {
        "bytes": 11, "tokens": 7, "ratio": 11 / 7,
        "steps": [
            {"pair": [97, 98], "count": 2, "new_id": 256, "length": 9,
             "top": [[2, [99, 100]], [2, [98, 32]], [2, [97, 98]], [2, [32, 99]], [1, [100, 32]], [1, [32, 97]]]},
            {"pair": [256, 32], "count": 2, "new_id": 257, "length": 7,
             "top": [[2, [256, 32]], [2, [99, 100]], [2, [32, 99]], [1, [100, 32]], [1, [32, 256]]]}]}
    code, out, _ = run(capsys, "lesson", "bpe", "ab cd ab cd", "--merges", 2)
    lines = out.splitlines()
    assert lines[0].split() == ["step", "pair", "as", "text", "count", "new", "id", "length", "tie"]
    assert lines[2].split() == ["1", "(97,", "98)", "a", "+", "b", "2", "256", "9", "first", "met", "of", "4;",
                                "sorted()", "lists", "(99,", "100)", "first"]
    assert lines[3].split() == ["2", "(256,", "32)", "ab", "+", "␣", "2", "257", "7", "first", "met", "of", "3"]
    assert lines[-1] == "11 bytes -> 7 tokens, compression ratio 1.57"


def test_pattern_keeps_pairs_inside_chunks(capsys, monkeypatch):
    """GPT-2 splits 'ab ab' into 'ab' and ' ab': (98, 32) is never a pair; two merges leave 2 tokens,
    and a third finds no pair. Read from stdin ('-')."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"ab ab")))
    code, out, _ = run(capsys, "lesson", "bpe", "-", "--merges", 3, "--pattern", "gpt2", "--json")
    answer = json.loads(out)
    assert code == 0 and [s["pair"] for s in answer["steps"]] == [[97, 98], [32, 256]]
    assert answer["steps"][0]["top"] == [[2, [97, 98]], [1, [32, 97]]] and answer["tokens"] == 2
    code, out, _ = run(capsys, "lesson", "bpe", "ab ab", "--merges", 3, "--pattern", "gpt2")
    assert "no pair left after 2 merges" in out and out.rstrip().endswith("5 bytes -> 2 tokens, compression ratio 2.50")


def test_bad_input_is_one_line(capsys, tmp_path):
    code, _, err = run(capsys, "lesson", "bpe", "", "--merges", 3)
    assert code == 1 and err == "tokexplorer: error: the text is empty: give some text to merge\n"
    big = tmp_path / "big.txt"
    big.write_text("x" * 10_000_001)
    code, _, err = run(capsys, "lesson", "bpe", "--file", big, "--merges", 1)
    assert code == 1 and "at most 10,000,000 (10 MB)" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as usage:
        run(capsys, "lesson", "bpe", "x", "--merges", "-1")
    assert usage.value.code == 2 and "not a number of merges" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        run(capsys, "lesson", "bpe", "x", "--merges", 1, "--pattern", "o200k")
