"""The command line's twins of the lecture's numbers: `inspect` prints Python's lists and looks
characters up as the decode box does, `trace --by-rule` prints the lecture's encode loop, and
`chunks` names each chunk's alternative of the split pattern."""

from __future__ import annotations

import json

from tokexplorer.cli.main import main
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.training.bpe import train


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_inspect_prints_what_python_prints(capsys):
    code, out, _ = run(capsys, "inspect", "--numbers", "decimal", "hello")
    assert code == 0
    for codec in ("utf-8", "utf-16", "utf-32"):
        assert f'list(text.encode("{codec}")) = {list("hello".encode(codec))}' in out
    code, out, _ = run(capsys, "inspect", "--json", "h")
    data = json.loads(out)
    assert data["python_bytes"]["utf-16"] == list("h".encode("utf-16")) and data["byte_order"] in ("little", "big")
    code, out, _ = run(capsys, "inspect", "--numbers", "decimal", "👋")
    assert "240 159 145 139  55357 56395" in out


def test_inspect_lookup_is_the_decode_box(capsys):
    code, out, _ = run(capsys, "inspect", "--lookup", "U+0068", "-t", "cl100k_base")
    assert code == 0 and out.splitlines() == ["ord('h') = 104  chr(104) = 'h'  U+0068 LATIN SMALL LETTER H  UTF-8 68",
                                              "in cl100k_base: 71 'h'"]
    code, out, _ = run(capsys, "inspect", "--lookup", "104", "-t", "cl100k_base", "--json")
    data = json.loads(out)
    assert data["ids"] == [104] and data["code_point"] == {"char": "h", "code_point": "U+0068",
                                                           "name": "LATIN SMALL LETTER H"}
    tok = get_builtin("llama-sp")
    code, out, _ = run(capsys, "inspect", "--lookup", "6312, 13", "-t", "llama-sp", "--json")
    assert [t["text"] for t in json.loads(out)["tokens"]] == [tok.pieces[6312], tok.pieces[13]] == ["▁hell", "<0x0A>"]
    code, _, err = run(capsys, "inspect", "--lookup", "U+110000", "-t", "gpt2")
    assert code == 1 and "past the last code point" in err


def test_inspect_names_sentencepiece_pieces(capsys):
    code, out, _ = run(capsys, "inspect", "-t", "llama-sp", "--json", "hello\n")
    assert [t["piece"] for t in json.loads(out)["tokens"]] == ["▁hell", "o", "<0x0A>"]


def test_trace_by_rule_prints_one_line_per_rule(capsys, tmp_path, corpora):
    """On a text, a Basic BPE of 20 merges: `trace --by-rule` gives the 20 rules in the order
    learned and agrees with the encoder; JSON has the places and the length after each."""
    from tokexplorer.core.files.trained import save_trained

    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:24_000]
    tok = train(text, 276, name="lecture")
    paths = save_trained(tok, tmp_path / "lecture", tok.save_formats[0])
    model = next(p for p in map(str, paths) if p.endswith(".model"))
    source = tmp_path / "text.txt"
    source.write_text(text, encoding="utf-8")
    code, out, _ = run(capsys, "trace", "-t", model, "--by-rule", "--file", str(source), "--json")
    assert code == 0
    [chunk] = json.loads(out)["chunks"]
    assert [r["new_id"] for r in chunk["rules"]] == list(range(256, 276))
    assert chunk["agrees"] and chunk["final"] == tok.encode(text).ids
    assert chunk["rules"][-1]["length"] == len(chunk["final"])
    code, out, _ = run(capsys, "trace", "-t", model, "--by-rule", "--file", str(source))
    assert out.count(") -> ") == 20 and "20 rules" in out


def test_chunks_names_the_alternatives_and_compares(capsys):
    code, out, _ = run(capsys, "chunks", "-t", "gpt2", "--json", "HE'S we'll 12345")
    data = json.loads(out)
    assert [(c["text"], c["matched_by"]) for c in data["chunks"]] == [
        ("HE", "letters (a space before)"), ("'", "punctuation (a space before)"), ("S", "letters (a space before)"),
        (" we", "letters (a space before)"), ("'ll", "contraction"), (" 12345", "numbers (a space before)")]
    code, out, _ = run(capsys, "chunks", "-t", "gpt2", "--compare", "cl100k", "HE'S we'll 12345")
    assert "3 of 6 chunks are not chunks of GPT-4 (cl100k_base)" in out
    code, out, _ = run(capsys, "chunks", "-t", "gpt2", "--compare", "encoder.py", "HE'S we'll 12345")
    assert "GPT-2 as released (OpenAI's encoder.py) splits this text into the same 6 chunks" in out
    code, _, err = run(capsys, "chunks", "-t", "llama-sp", "hello")
    assert code == 1 and "no regex pre-split" in err
