"""Merge trees: read off known merges, recovered from tiktoken ranks, split from SentencePiece scores."""

from __future__ import annotations

import pytest

from tokexplorer.core.training.bpe import train
from tokexplorer.core.analysis.merge_tree import MergeNode, merge_tree, tree_from_ranks
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.training.sentencepiece import llama2_options, train_sentencepiece
from tokexplorer.core.backends.tiktoken_family import TiktokenTokenizer
from tokexplorer.core.tokenizer import TokexplorerError


def leaves(node: MergeNode) -> list[MergeNode]:
    return [node] if node.is_leaf else leaves(node.left) + leaves(node.right)


def check_tree(node: MergeNode) -> None:
    """Every node's bytes are its children's, and children come before their parent."""
    if node.is_leaf:
        return
    assert node.left.bytes + node.right.bytes == node.bytes
    if node.id is not None:
        assert node.left.id is None or node.left.id != node.id
    check_tree(node.left)
    check_tree(node.right)


def test_recovered_merges_equal_the_trained_ones(corpora):
    """Build a tiktoken vocabulary from trained ranks, forget the merges, recover them."""
    tok = train((corpora / "en/taylorswift.txt").read_text("utf-8"), 600, pattern="gpt4")
    ranks = tok.mergeable_ranks
    for token_id in range(256, 600):
        assert tree_from_ranks(ranks, tok.vocab[token_id]) == merge_tree(tok, token_id)


@pytest.mark.parametrize("name, text", [("gpt2", " hello"), ("cl100k_base", " tokenization"),
                                        ("o200k_base", " unbelievable")])
def test_tiktoken_builtin_trees(name, text):
    tok = get_builtin(name)
    for token_id in tok.encode(text).ids:
        tree = merge_tree(tok, token_id)
        check_tree(tree)
        assert all(len(leaf.bytes) == 1 for leaf in leaves(tree))
        assert tree.bytes == tok.token_bytes(token_id)


def test_cl100k_recovers_the_lecture_merge():
    tok = get_builtin("cl100k_base")
    tree = merge_tree(tok, tok.encode(" tokenization").ids[0])  # " token"
    assert (tree.left.text, tree.right.text) == (" to", "ken")
    assert tree.left.id < tree.id and tree.right.id < tree.id


def test_sentencepiece_bpe_trees(corpora):
    text = (corpora / "en/taylorswift.txt").read_text("utf-8")[:50_000]
    tok = train_sentencepiece(text, llama2_options(600))
    piece = max(range(tok.n_vocab), key=lambda i: len(tok.pieces[i]) if not tok.pieces[i].startswith("<") else 0)
    tree = merge_tree(tok, piece)
    check_tree(tree)
    assert tree.depth() >= 2 and "".join(leaf.text for leaf in leaves(tree)) == tok.token_bytes(piece).decode()
    assert all(len(leaf.text) == 1 for leaf in leaves(tree))
    builtin = get_builtin("llama-sp")
    tree = merge_tree(builtin, builtin.encode(" hello").ids[-1])
    check_tree(tree)


def test_no_tree_for_unigram_or_special_tokens():
    unigram = train_sentencepiece("hello world\nhello there\n" * 50, llama2_options(12, "unigram", byte_fallback=False))
    with pytest.raises(TokexplorerError, match="unigram"):
        merge_tree(unigram, 10)
    with pytest.raises(TokexplorerError, match="special token"):
        merge_tree(get_builtin("gpt2"), 50256)
    with pytest.raises(TokexplorerError, match="not in"):
        merge_tree(train("abab", 258), 400)


def test_tree_json_shape():
    tok = TiktokenTokenizer.from_ranks("toy", {b"a": 0, b"b": 1, b"ab": 2}, r"\S+")
    assert merge_tree(tok, 2).to_dict() == {
        "id": 2, "rank": 2, "bytes": "6162", "text": "ab", "children": [
            {"id": 0, "rank": 0, "bytes": "61", "text": "a", "children": []},
            {"id": 1, "rank": 1, "bytes": "62", "text": "b", "children": []}]}


def test_gpt2_hello_tree_golden():
    """GPT-2's " hello" (23748) is " hell" + "o", " hell" is " he" + "ll", " he" is " " + "he".

    Ranks are checked against tiktoken itself (encode_single_token gives a token's rank)."""
    tok = get_builtin("gpt2")
    tree = merge_tree(tok, 23748)
    assert [leaf.bytes for leaf in leaves(tree)] == [b" ", b"h", b"e", b"l", b"l", b"o"]
    assert (tree.left.text, tree.right.text) == (" hell", "o")
    assert (tree.left.left.text, tree.left.right.text) == (" he", "ll")
    enc = tok.tiktoken_encoding

    def walk(node):
        assert node.rank == node.id == enc.encode_single_token(node.bytes)
        if not node.is_leaf:
            assert node.left.rank < node.rank and node.right.rank < node.rank
            walk(node.left)
            walk(node.right)

    walk(tree)
    assert [n.rank for n in (tree, tree.left, tree.left.left, tree.left.right)] == [23748, 5968, 339, 297]


def test_tree_layout_places_leaves_in_byte_order():
    from tokexplorer.core.analysis.merge_tree import tree_layout

    placed = tree_layout(merge_tree(get_builtin("gpt2"), 278))  # "ing" = ("i" + "n") + "g"
    assert [(p.node.text, p.x, p.y) for p in placed] == [
        ("ing", 1.75, 0), ("in", 1.0, 1), ("i", 0.5, 2), ("n", 1.5, 2), ("g", 2.5, 1)]
    assert [p.parent for p in placed] == [-1, 0, 1, 1, 0]


def test_tree_layout_keeps_wide_boxes_of_a_level_apart():
    """Boxes as wide as their labels: on every level, neighbours are at least the gap apart."""
    from tokexplorer.core.analysis.merge_tree import tree_layout

    tok = get_builtin("llama-sp")
    tree = merge_tree(tok, tok.encode(" Chinese").ids[-1])

    def width(node) -> float:  # a leaf's "id 28710 / rank 28451" is wider than its one character
        return 10.0 + 7.0 * max(len(node.text), len(f"rank {node.rank}"))

    placed = tree_layout(tree, width, gap=8.0)
    for level in {p.y for p in placed}:
        row = sorted((p.x - width(p.node) / 2, p.x + width(p.node) / 2) for p in placed if p.y == level)
        for (_, right), (left, _) in zip(row, row[1:]):
            assert left - right >= 8.0 - 1e-9
    for p in placed[1:]:  # every child below its parent, and within the parent's subtree
        assert p.y == placed[p.parent].y + 1
    assert [p.node.text for p in placed if p.node.is_leaf] == list(" Chinese")


def test_a_chain_of_merges_deeper_than_shown_is_one_message(tmp_path):
    """A crafted minbpe file within the token-size budget can chain thousands of merges (each of
    the last token with one more byte); its tree is refused with a message, not a RecursionError
    (`merges --token` printed a traceback), while a tree of MAX_DEPTH merges is still drawn."""
    from tokexplorer.cli.main import main
    from tokexplorer.core.analysis.merge_tree import MAX_DEPTH, merge_tree
    from tokexplorer.core.backends.trained_bpe import BPETokenizer
    from tokexplorer.core.files.minbpe import save_minbpe

    merges = {(97, 97): 256, **{(256 + k, 97): 257 + k for k in range(3000)}}
    tok = BPETokenizer(merges, None)
    assert merge_tree(tok, 256 + MAX_DEPTH - 1).depth() == MAX_DEPTH
    with pytest.raises(TokexplorerError, match=f"chain of over {MAX_DEPTH} merges"):
        merge_tree(tok, 256 + MAX_DEPTH)
    model = save_minbpe(tok, tmp_path / "chain")[0]
    assert main(["merges", "-t", str(model), "--token", "3256"]) == 1
