"""The merge-tree panel: the tree of merges behind the selected token (under the caret, under the
mouse, or picked in the vocabulary), drawn from the root down to its bytes; each node shows the
token's text (spaces as ␣, partial characters as \\xNN), id and rank, in the token's editor colour.
Clicking a node marks that token's occurrences in the text (through the state's marked token).

The tree comes from the core's `merge_tree`, recovered by the tokenizing server (`MergeTreeOf`: a
tiktoken tree scans the ranks once per node, and the first SentencePiece tree builds the piece
order, ~30 ms); the panel lays it out (`tree_layout`, each box as wide as its label measured in
the fonts drawn, so no two labels overlap at any zoom) and draws it, and keeps the last CACHE
trees. Requests carry a generation number; an answer that a newer request has overtaken is
dropped. A token that has no tree (a unigram piece, an id out of range) is an answer too: the
server's message is shown in the title.
Wheel with Ctrl zooms; the view scrolls. It never calls another panel.
"""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QBrush, QColor, QFont, QFontMetricsF, QPainter, QPen
from PySide6.QtWidgets import (QGraphicsItem, QGraphicsRectItem, QGraphicsScene, QGraphicsSimpleTextItem,
                               QGraphicsView, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget)

from tokexplorer.core.analysis.merge_tree import MergeNode, tree_layout
from tokexplorer.core.token_colours import colour_indices
from tokexplorer.gui.widgets.colours import TokenPalette
from tokexplorer.gui.state import AppState
from tokexplorer.core.analysis.unicode_info import token_label
from tokexplorer.server.protocol import MergeTreeOf

GAP = 10.0  # pixels between neighbouring boxes of a level
RISE = 22.0  # pixels from a box's bottom to the top of the level below
LONGEST = 16  # a node's text is elided beyond this many em
READABLE = 0.6  # Fit shrinks a tree no further: its labels stay readable
PAD = 6.0  # pixels inside a node box
CACHE = 256  # trees kept per panel: (tokenizer, id) -> MergeNode


class NodeItem(QGraphicsRectItem):
    """One token of the tree: a box with its text and, below, its id and (when it differs) its rank,
    one line each.

    subtle: no Python override of itemChange: Qt calls it for every flag, pen and position set on
    every item, which made drawing a tree cost 20 ms; the panel sets the selected node's pen."""

    def __init__(self, node: MergeNode, rect: QRectF, lines: list[tuple[str, QFont, float, float]], fill: QColor,
                 pen: QPen, ink: QColor):
        super().__init__(rect)
        self.node = node
        self.setBrush(QBrush(fill))
        self.setPen(pen)
        if node.id is not None:
            self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
            self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.labels: list[QGraphicsSimpleTextItem] = []  # its lines, top to bottom
        top = rect.top() + PAD / 2
        for text, font, width, height in lines:
            item = QGraphicsSimpleTextItem(text, self)
            item.setFont(font)
            item.setBrush(ink)
            item.setPos(rect.center().x() - width / 2, top)
            top += height
            self.labels.append(item)
        self.setToolTip(f"{token_label(node.bytes)}\nid {node.id}\nrank {node.rank}\nbytes {node.bytes.hex(' ')}"
                        + ("\nclick to mark its occurrences in the text" if node.id is not None else ""))


class TreeView(QGraphicsView):
    """A graphics view that zooms with Ctrl+wheel (and the panel's buttons)."""

    def __init__(self, scene: QGraphicsScene):
        super().__init__(scene)
        self.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)

    def wheelEvent(self, event) -> None:
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            self.zoom(1.15 if event.angleDelta().y() > 0 else 1 / 1.15)
        else:
            super().wheelEvent(event)

    def zoom(self, factor: float) -> None:
        scale = self.transform().m11() * factor
        if 0.1 <= scale <= 6:
            self.scale(factor, factor)


class MergeTreePanel(QWidget):
    def __init__(self, state: AppState, parent=None):
        super().__init__(parent)
        self.setObjectName("merge_tree_panel")
        self.state = state
        self.token_id = -1  # the token whose tree is shown (or asked for)
        self._pinned = -1  # the caret's or the vocabulary's token, shown when the mouse leaves
        self._generation = 0
        self._answered = 0  # the latest generation whose tree (or reason) is shown
        self._cache: OrderedDict[tuple[str, int], MergeNode | str] = OrderedDict()
        self.tree: MergeNode | None = None
        self.items: list[NodeItem] = []
        self.title = QLabel("Put the caret on a token, or pick one in the vocabulary.")
        self.title.setObjectName("merge_tree_title")
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.status = QLabel("")
        self.status.setObjectName("merge_tree_status")
        self.status.setWordWrap(True)
        self.scene = QGraphicsScene(self)
        self.view = TreeView(self.scene)
        buttons = QHBoxLayout()
        for text, tip, slot in (("−", "Zoom out (Ctrl+wheel)", lambda: self.view.zoom(1 / 1.25)),
                                ("+", "Zoom in (Ctrl+wheel)", lambda: self.view.zoom(1.25)),
                                ("Fit", "Fit the whole tree", self.fit),
                                ("1:1", "Actual size", self.view.resetTransform)):
            b = QToolButton()
            b.setText(text)
            b.setToolTip(tip)
            b.clicked.connect(slot)
            buttons.addWidget(b)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.title)
        layout.addWidget(self.view, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.status)
        self.scene.selectionChanged.connect(self._on_selection)
        state.caret_changed.connect(self._on_caret)
        state.hovered_changed.connect(self._on_hovered)
        state.token_chosen.connect(self._pin)
        state.tokenizer_changed.connect(self._on_tokenizer_changed)
        state.tokenized.connect(lambda _: self._show_marked_count())
        state.dark_changed.connect(lambda _: self.tree is not None and self._draw(self.tree))
        state.token_colours_changed.connect(lambda _: self.tree is not None and self._draw(self.tree))
        self._on_caret(state.caret)  # made after the caret moved (the window makes it when first shown)

    def sizeHint(self) -> QSize:
        return QSize(640, 340)  # room for a tree of depth 4 at actual size

    # --- which token ---------------------------------------------------------------------

    def _id_at(self, index: int) -> int:
        result = self.state.result
        if result is None or not 0 <= index < len(result):
            return -1
        return result.encoding.ids[index]

    def _on_caret(self, index: int) -> None:
        if index >= 0:  # -1 while an edit is being tokenized: keep the tree
            self._pin(self._id_at(index))

    def _pin(self, token_id: int) -> None:
        if token_id >= 0:
            self._pinned = token_id
            self.show_token(token_id)

    def _on_hovered(self, index: int) -> None:
        token_id = self._id_at(index) if index >= 0 else self._pinned
        if token_id >= 0:
            self.show_token(token_id)

    @property
    def up_to_date(self) -> bool:
        """The tree asked for last is drawn (for screenshots and tests)."""
        return self._answered == self._generation

    def _on_tokenizer_changed(self, name: str) -> None:
        self._generation += 1
        self._answered = self._generation
        self.token_id = self._pinned = -1
        self.tree = None
        self.scene.clear()
        self.items = []
        self.state.set_marked(-1)
        self.title.setText("Put the caret on a token, or pick one in the vocabulary.")
        self.status.setText("")

    # --- the tree ------------------------------------------------------------------------

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if self._pinned >= 0:
            self.show_token(self._pinned)

    def show_token(self, token_id: int) -> None:
        """Show the merge tree of a token id of the current tokenizer (asked of the server);
        while the panel is hidden, only remember it."""
        if token_id == self.token_id or not self.isVisible():
            return
        self.token_id = token_id
        self._generation += 1
        gen, name = self._generation, self.state.tokenizer
        known = self._cache.get((name, token_id))
        if known is not None:
            self._show(gen, name, token_id, known)
            return
        # A token without a tree is answered with the server's reason (an error message): shown,
        # not kept, since it may also be a server that stopped.
        self.state.server.ask(MergeTreeOf(name, token_id),
                              lambda tree: self._show(gen, name, token_id, tree),
                              lambda message: self._show(gen, name, token_id, message))

    def _show(self, gen: int, name: str, token_id: int, answer: MergeNode | str) -> None:
        if isinstance(answer, MergeNode):
            self._cache[(name, token_id)] = answer
            self._cache.move_to_end((name, token_id))
            while len(self._cache) > CACHE:
                self._cache.popitem(last=False)
        if gen != self._generation:
            return  # a newer token was asked for meanwhile
        self._answered = gen
        if isinstance(answer, str):
            self.tree = None
            self.scene.clear()
            self.items = []
            self.title.setText(f"Token {token_id} of {name} has no merge tree: {answer}.")
            return
        self.tree = answer
        merges = sum(1 for item in tree_layout(answer) if not item.node.is_leaf)
        rank = "" if answer.rank is None else f" · rank {answer.rank}"  # a family may not know it
        self.title.setText(f"<b>{_escape(token_label(answer.bytes))}</b> · id {answer.id}{rank} · "
                           f"{len(answer.bytes)} bytes · {merges} merge{'s' * (merges != 1)}, depth {answer.depth()} "
                           f"<span style='color:gray'>({name})</span>")
        self._draw(answer)

    def _draw(self, tree: MergeNode) -> None:
        self.scene.clear()
        self.items = []
        dark = self.state.dark
        font = QFont(self.font())
        small = QFont(font)
        small.setPointSizeF(max(font.pointSizeF() * 0.9, 7))
        fm, fm_small = QFontMetricsF(font), QFontMetricsF(small)
        longest = fm.horizontalAdvance("M") * LONGEST  # a longer token's text is elided in the middle
        lines: dict[int, list[str]] = {}  # id(node) -> its label's lines (text, id, rank)

        def width(node: MergeNode) -> float:
            """The node's box: as wide as its widest line (measured in the fonts drawn)."""
            if id(node) not in lines:
                text = fm.elidedText(token_label(node.bytes), Qt.TextElideMode.ElideMiddle, longest)
                lines[id(node)] = [text, *_subtitle(node)]
            text, *subs = lines[id(node)]
            return max([fm.horizontalAdvance(text)] + [fm_small.horizontalAdvance(s) for s in subs]) + 2 * PAD

        placed = tree_layout(tree, width, GAP)
        n_lines = max(len(v) for v in lines.values())  # every box of a tree equally tall
        # subtle: a text item's bounding rect is the font height rounded up to whole pixels
        tall, tall_small = math.ceil(fm.height()), math.ceil(fm_small.height())
        height = tall + (n_lines - 1) * tall_small + PAD
        level = height + RISE
        palette = TokenPalette(dark, self.state.token_colours)
        pen = QPen(QColor("#5f6368" if not dark else "#bdc1c6"), 1)
        ink = QColor("#202124") if not dark else QColor("#e8eaed")
        no_piece = QColor("#eeeeee") if not dark else QColor("#3c4043")
        colours = colour_indices(np.array([p.node.id or 0 for p in placed], dtype=np.int64))
        edge_pen = QPen(QColor("#9aa0a6"), 1.5)
        rects = []
        for p, c in zip(placed, colours):
            text, *subs = lines[id(p.node)]
            w = width(p.node)
            rect = QRectF(p.x - w / 2, p.y * level, w, height)
            rects.append(rect)
            fill = (palette.background(int(c)) if p.node.id is not None else None) or no_piece
            texts = [(text, font, fm.horizontalAdvance(text), tall)]
            texts += [(sub, small, fm_small.horizontalAdvance(sub), tall_small) for sub in subs]
            item = NodeItem(p.node, rect, texts, fill, pen, ink)
            item.setZValue(1)
            self.scene.addItem(item)
            self.items.append(item)
            if p.parent >= 0:
                top = rects[p.parent]
                self.scene.addLine(top.center().x(), top.bottom(), rect.center().x(), rect.top(), edge_pen)
        self.scene.setSceneRect(self.scene.itemsBoundingRect().adjusted(-GAP, -GAP, GAP, GAP))
        self.view.resetTransform()
        rect, port = self.scene.sceneRect(), self.view.viewport()
        if rect.width() > port.width() or rect.height() > port.height():
            self.fit()
        else:
            self.view.centerOn(rect.center())
        self._show_marked_count()

    def fit(self) -> None:
        """Fit the whole tree into the view, never larger than actual size; when that would make
        its labels smaller than READABLE, fit its width instead (no smaller than READABLE), and
        the view scrolls down from the root."""
        rect = self.scene.sceneRect()
        if rect.isEmpty():
            return
        self.view.resetTransform()
        across = self.view.viewport().width() / rect.width()
        scale = min(across, self.view.viewport().height() / rect.height(), 1.0)
        if scale < READABLE:
            scale = max(min(across, 1.0), READABLE)
        self.view.scale(scale, scale)
        self.view.centerOn(self.items[0].rect().center() if self.items else rect.center())

    # --- marking -------------------------------------------------------------------------

    def _on_selection(self) -> None:
        selected = [i for i in self.scene.selectedItems() if isinstance(i, NodeItem)]
        for item in self.items:
            pen = item.pen()
            pen.setWidthF(3 if item.isSelected() else 1)
            item.setPen(pen)
        self.state.set_marked(selected[0].node.id if selected else -1)
        self._show_marked_count()

    def select_node(self, node_id: int) -> None:
        """Select (as a click does) the first node of the shown tree with this token id."""
        for item in self.items:
            if item.node.id == node_id:
                self.scene.clearSelection()
                item.setSelected(True)
                return

    def _show_marked_count(self) -> None:
        token_id, result = self.state.marked, self.state.result
        if token_id < 0 or result is None:
            self.status.setText("Click a node to mark that token in the text.")
            return
        n = int(np.count_nonzero(result.encoding.id_array == token_id))
        label = next((token_label(i.node.bytes) for i in self.items if i.node.id == token_id), str(token_id))
        self.status.setText(f"“{label}” (id {token_id}) is {n:,} of the text's tokens"
                            + (", marked in the text." if n else "; it only occurs inside bigger tokens here."))


def _subtitle(node: MergeNode) -> list[str]:
    """The lines under a node's text: its id, and its rank on a line of its own when it differs."""
    if node.id is None:
        return ["not a piece"]
    return [f"id {node.id}"] + ([] if node.rank in (None, node.id) else [f"rank {node.rank}"])


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
