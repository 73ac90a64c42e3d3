"""Merge trees: the binary tree of merges behind a token, down to bytes (or characters).

- BPE trained here or read from minbpe files: the merges are known, the tree is read off them.
- tiktoken encodings (GPT-2, cl100k, o200k, .tiktoken files) store only ranks. A token of rank r
  was made from the two parts that byte-level BPE produces on its bytes using only ranks below r
  (the lecture's way of recovering GPT-4's merges); the tree follows that recursively.
- SentencePiece BPE: a piece's score is minus its merge order, so a piece splits into the two
  parts that BPE over its characters produces using only pieces of higher score. Leaves are
  characters (or byte pieces such as <0xE4>). Unigram models have no merges and no trees.

Each tokenizer's own `merge_tree` picks the way that fits it; this module holds the ways and branches
on no family. It does not draw anything: views render the nodes.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Callable, NamedTuple

from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

# Merges on a tree's longest path at most: every walk over a tree (depth, to_dict, layouts,
# drawings) goes down it recursively. Real vocabularies stay far below (cl100k_base's deepest
# token: a few dozen); a crafted file can chain thousands of merges.
MAX_DEPTH = 500


@dataclass(frozen=True)
class MergeNode:
    """A token and, unless it is a leaf, the two tokens merged into it."""

    id: int | None  # None for a SentencePiece character that is not itself a piece
    bytes: bytes
    left: "MergeNode | None" = None
    right: "MergeNode | None" = None
    rank: int | None = None  # merge order (tiktoken: the rank, which is the id); None if unknown

    @property
    def is_leaf(self) -> bool:
        return self.left is None

    @property
    def text(self) -> str:
        return self.bytes.decode("utf-8", errors="replace")

    def to_dict(self) -> dict:
        """For JSON: id, bytes (hex), text and children.

        >>> MergeNode(104, b"h", rank=104).to_dict()
        {'id': 104, 'rank': 104, 'bytes': '68', 'text': 'h', 'children': []}
        """
        children = [] if self.is_leaf else [self.left.to_dict(), self.right.to_dict()]
        return {"id": self.id, "rank": self.rank, "bytes": self.bytes.hex(), "text": self.text,
                "children": children}

    def depth(self) -> int:
        """Merges on the longest path down to a leaf."""
        return 0 if self.is_leaf else 1 + max(self.left.depth(), self.right.depth())


def merge_tree(tok: Tokenizer, token_id: int) -> MergeNode:
    """The merge tree of a token of any BPE tokenizer (`Tokenizer.merge_tree`), refusing special
    tokens, which no merge made.

    >>> from tokexplorer.core.backends.trained_bpe import BPETokenizer
    >>> tree = merge_tree(BPETokenizer({(104, 105): 256, (256, 33): 257}, None), 257)
    >>> tree.left.id, tree.left.left.text, tree.right.bytes, tree.depth()
    (256, 'h', b'!', 2)
    """
    if token_id in tok.special_tokens.values():
        raise TokexplorerError(f"token {token_id} is a special token: it was added, not merged")
    # each family knows where its merges come from: learned merges (`tree_from_merges`), tiktoken
    # ranks (`tree_from_ranks`), SentencePiece scores (`tree_from_scores`), a tokenizer.json's list
    return tok.merge_tree(token_id)


def tree_from_merges(tok, token_id: int) -> MergeNode:
    """From known merges (pair -> id): a trained or minbpe tokenizer."""
    parts = {new: pair for pair, new in tok.merges.items()}
    if token_id not in tok.vocab:
        raise TokexplorerError(f"token id {token_id} is not in {tok.name} (0..{tok.n_vocab - 1})")

    def build(i: int, depth: int = 0) -> MergeNode:
        if i not in parts:
            return MergeNode(i, tok.vocab[i], rank=i)
        check_depth(token_id, depth)
        a, b = parts[i]
        return MergeNode(i, tok.vocab[i], build(a, depth + 1), build(b, depth + 1), rank=i)

    return build(token_id)


def check_depth(token, depth: int) -> None:
    """Refuse a merge at `depth` below the root of `token`'s tree past MAX_DEPTH."""
    if depth >= MAX_DEPTH:
        raise TokexplorerError(f"token {token} is built by a chain of over {MAX_DEPTH:,} merges: its merge "
                               "tree is too deep to show")


def _bpe(parts: list, priority: dict, limit) -> list:
    """Merge adjacent parts by priority (lower first) while below `limit`; the parts left."""
    parts = list(parts)
    while len(parts) > 1:
        best = None
        for i in range(len(parts) - 1):
            p = priority.get(parts[i] + parts[i + 1])
            if p is not None and p < limit and (best is None or p < best[0]):
                best = (p, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return parts


def tree_from_ranks(ranks: dict[bytes, int], data: bytes) -> MergeNode:
    """From tiktoken ranks (token bytes -> rank), recovering each merge.

    >>> ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"abc": 4}
    >>> tree = tree_from_ranks(ranks, b"abc")
    >>> tree.left.bytes, tree.left.id, tree.right.id
    (b'ab', 3, 2)
    """
    if data not in ranks:
        raise TokexplorerError(f"{data!r} is not a token of this vocabulary")

    def build(token: bytes, depth: int = 0) -> MergeNode:
        rank = ranks[token]
        if len(token) == 1:
            return MergeNode(rank, token, rank=rank)
        parts = _bpe([bytes([b]) for b in token], ranks, rank)
        if len(parts) != 2:  # not reachable by byte-level BPE: show it as a leaf
            return MergeNode(rank, token, rank=rank)
        check_depth(ranks[data], depth)
        return MergeNode(rank, token, build(parts[0], depth + 1), build(parts[1], depth + 1), rank=rank)

    return build(data)


def tree_from_scores(tok, token_id: int) -> MergeNode:
    """From a SentencePiece BPE model's pieces and scores."""
    if tok.options.get("model_type") != "bpe":
        raise TokexplorerError(
            f"{tok.name} is a SentencePiece {tok.options.get('model_type')} model: only BPE models "
            "are built by merges"
        )
    pieces = tok.pieces
    if not 0 <= token_id < len(pieces):
        raise TokexplorerError(f"token id {token_id} is not in {tok.name} (0..{len(pieces) - 1})")
    ids, order = piece_order(tok)

    def build(piece: str, depth: int = 0) -> MergeNode:
        i = ids.get(piece)
        data = tok.token_bytes(i) if i is not None else piece.replace("\u2581", " ").encode("utf-8")
        rank = None if i is None else round(order[piece])
        if len(piece) == 1 or i is None:
            return MergeNode(i, data, rank=rank)
        parts = _bpe(list(piece), order, order[piece])
        if len(parts) != 2:  # a byte piece, a control piece or a user-defined piece
            return MergeNode(i, data, rank=rank)
        check_depth(token_id, depth)
        return MergeNode(i, data, build(parts[0], depth + 1), build(parts[1], depth + 1), rank=rank)

    return build(pieces[token_id])


_piece_orders: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # tokenizer -> (ids, order)


def piece_order(tok) -> tuple[dict[str, int], dict[str, float]]:
    """A SentencePiece model's piece -> id and piece -> merge order (minus the score: lower merges
    first, as tiktoken ranks), built once per tokenizer (about 30 ms for 32,000 pieces)."""
    known = _piece_orders.get(tok)
    if known is None:
        pieces = tok.pieces
        ids = {p: i for i, p in enumerate(pieces)}
        known = ids, {p: -tok.score(i) for p, i in ids.items()}
        _piece_orders[tok] = known
    return known


class PlacedNode(NamedTuple):
    """A node of a drawn tree: x the centre of its box (in the widths' unit), y its level (root 0)."""

    node: MergeNode
    x: float
    y: int
    parent: int  # index of the parent in the layout, -1 for the root


def tree_layout(root: MergeNode, width: Callable[[MergeNode], float] = lambda node: 1.0,
                gap: float = 0.0) -> list[PlacedNode]:
    """Place a tree for drawing, each node as a box `width(node)` wide: leaves left to right in
    byte order, `gap` apart; each parent one level above its children and centred over them. Every
    subtree keeps to its own stretch of x, as wide as its widest level, and neighbouring stretches
    are `gap` apart, so no two boxes of one level overlap however wide their labels are. Parents
    come before their children.

    >>> a, b, c = MergeNode(0, b"a"), MergeNode(1, b"b"), MergeNode(2, b"c")
    >>> [(p.node.text, p.x, p.y, p.parent) for p in tree_layout(MergeNode(4, b"abc", MergeNode(3, b"ab", a, b), c))]
    [('abc', 1.75, 0, -1), ('ab', 1.0, 1, 0), ('a', 0.5, 2, 1), ('b', 1.5, 2, 1), ('c', 2.5, 1, 0)]
    >>> [p.x for p in tree_layout(MergeNode(3, b"ab", a, b), width=lambda n: 3.0 if n.id == 3 else 1.0)]
    [1.5, 1.0, 2.0]
    """
    spans: dict[int, float] = {}  # id(node) -> width of its subtree's stretch

    def span(node: MergeNode) -> float:
        own = width(node)
        if not node.is_leaf:
            own = max(own, span(node.left) + gap + span(node.right))
        spans[id(node)] = own
        return own

    span(root)
    placed: list[PlacedNode] = []

    def place(node: MergeNode, left: float, y: int, parent: int) -> None:
        """Place a subtree in the stretch that starts at x = left."""
        index = len(placed)
        placed.append(PlacedNode(node, 0.0, y, parent))
        whole = spans[id(node)]
        if node.is_leaf:
            x = left + whole / 2
        else:
            below = spans[id(node.left)] + gap + spans[id(node.right)]
            start = left + (whole - below) / 2  # children centred when the parent is the wider
            first = len(placed)
            place(node.left, start, y + 1, index)
            second = len(placed)
            place(node.right, start + spans[id(node.left)] + gap, y + 1, index)
            half = width(node) / 2
            # over the children's centres, but inside its own stretch
            x = min(max((placed[first].x + placed[second].x) / 2, left + half), left + whole - half)
        placed[index] = placed[index]._replace(x=x)

    place(root, 0.0, 0, -1)
    return placed


def leaves(root: MergeNode) -> list[MergeNode]:
    """The tree's leaves, left to right (their bytes joined are the token's bytes)."""
    if root.is_leaf:
        return [root]
    return leaves(root.left) + leaves(root.right)
