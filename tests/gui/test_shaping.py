"""Colouring never changes how text is drawn: lines of Myanmar, Khmer, Devanagari, Arabic and emoji
ZWJ sequences from the shared corpora, under every built-in tokenizer, keep the glyphs and pixels
they have uncoloured (a token boundary inside a syllable or an emoji sequence must not split
Qt's shaping, which drew dotted circles when colours were character formats)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtGui import QColor, QImage, QTextLayout
from PySide6.QtWidgets import QPlainTextEdit

from tokexplorer.core.registry import builtin_names
from tokexplorer.gui.editor import token_view as editor_module

from .helpers import wait_settled

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"
if not CORPORA.is_dir():
    CORPORA = Path("/work/shared/corpora")


def corpus_lines(name: str, n: int = 3, width: int = 120) -> str:
    """The first n non-empty lines of a UDHR text, each cut to `width` characters."""
    lines = [line[:width] for line in (CORPORA / "multilingual" / "udhr" / name).read_text("utf-8").splitlines()
             if line.strip()]
    return "\n".join(lines[:n])


def emoji_zwj_lines(n: int = 12) -> str:
    """RGI emoji ZWJ sequences from the Unicode data file, a few to a line, between words."""
    text = (CORPORA / "unicode" / "emoji-zwj-sequences.txt").read_text("utf-8")
    seqs = re.findall(r"^[0-9A-F ]+;.*\((.+)\)$", text, flags=re.M)
    picked = seqs[:: max(1, len(seqs) // (3 * n))][: 3 * n]
    return "\n".join(f"a {' b '.join(picked[i:i + 3])} c" for i in range(0, len(picked), 3))


SAMPLES = {
    "myanmar": lambda: corpus_lines("udhr_mya.txt"),
    "khmer": lambda: corpus_lines("udhr_khm.txt"),
    "devanagari": lambda: corpus_lines("udhr_hin.txt"),
    "arabic": lambda: corpus_lines("udhr_arb.txt") + "\nabc " + corpus_lines("udhr_arb.txt", 1, 30) + " 123 def",
    "emoji-zwj": emoji_zwj_lines,
}


def glyph_runs(layout: QTextLayout) -> list[tuple[int, ...]]:
    lines = [layout.lineAt(i) for i in range(layout.lineCount())]
    return [tuple(run.glyphIndexes()) for line in lines for run in line.glyphRuns()]


def reference_runs(text: str, font) -> list[tuple[int, ...]]:
    """The glyphs of `text` laid out on its own, with one format, on one line."""
    layout = QTextLayout(text, font)
    layout.beginLayout()
    layout.createLine().setLineWidth(1e6)
    layout.endLayout()
    return glyph_runs(layout)


def grab(editor) -> QImage:
    editor.viewport().repaint()
    return editor.viewport().grab().toImage()


class Plain(editor_module.TokenPalette):
    """Backgrounds off: every token painted in the editor's own base colour."""

    def __init__(self, base: QColor):
        super().__init__(False)
        self._base = base

    def background(self, colour_index: int) -> QColor:
        return self._base

    def special(self):
        return self._base, self._base


@pytest.mark.parametrize("script", list(SAMPLES))
def test_colouring_keeps_glyphs_and_pixels(qtbot, window, script):
    text = SAMPLES[script]()
    editor = window.editor
    editor.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    editor.setCursorWidth(0)  # no blinking caret in the pictures
    window.documents.set_text(text)
    for name in builtin_names():
        window.state.set_tokenizer(name)
        wait_settled(qtbot, window)
        result = window.state.result
        assert result.encoding.text == text
        block = editor.document().begin()
        while block.isValid():
            assert not block.layout().formats(), "colours must not be character formats"
            if block.text():
                assert glyph_runs(block.layout()) == reference_runs(block.text(), editor.font()), block.text()
            block = block.next()
        coloured = grab(editor)
        editor.set_result(None)
        uncoloured = grab(editor)
        assert coloured != uncoloured  # the colours are really painted
        palette, markers = editor._palette, editor_module.paint_markers
        editor._palette, editor_module.paint_markers = Plain(editor.palette().base().color()), lambda *a: None
        try:
            editor.set_result(result)
            assert editor.drawn_tokens()
            assert grab(editor) == uncoloured, f"{name} changes the drawing of {script} text"
        finally:
            editor._palette, editor_module.paint_markers = palette, markers
        editor.set_result(result)


def rendered(viewport, top: int):
    """The viewport painted from row `top` down only (as a repaint of that part does), as an
    array of rows; the rows above are left black."""
    from PySide6.QtCore import QPoint, QRect
    from PySide6.QtGui import QRegion
    from PySide6.QtWidgets import QWidget

    image = QImage(viewport.size(), QImage.Format.Format_RGB32)
    image.fill(QColor("black"))
    part = QRect(0, top, viewport.width(), viewport.height() - top)
    viewport.render(image, QPoint(0, top), QRegion(part), QWidget.RenderFlag.DrawWindowBackground)
    # copied: the array must not outlive the image's memory
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), image.bytesPerLine()).copy()


@pytest.mark.parametrize("compare", [False, True], ids=["editor", "compare"])
def test_a_partial_repaint_paints_what_a_whole_one_does(qtbot, window, compare):
    """Byte-level tokens that share a Myanmar or Devanagari character overlap there: the colour
    shown must not depend on which part of the screen is repainted (a keystroke repaints a few
    lines; the screen kept colours a whole repaint would not draw)."""
    text = "\n".join((CORPORA / "multilingual" / "udhr" / name).read_text("utf-8")[:1500]
                     for name in ("udhr_mya.txt", "udhr_hin.txt", "udhr_arb.txt"))
    window.documents.set_text(text)
    window.state.set_tokenizer("gpt2")
    wait_settled(qtbot, window)
    panes = [window.editor]
    if compare:
        window.compare.set_tokenizers(["gpt2", "cl100k_base"])
        window.compare.set_active(True)
        qtbot.waitUntil(lambda: window.compare.up_to_date, timeout=60_000)
        panes = window.compare.panes
    for width in (1400, 1150, 900):  # lines wrapped in other places
        window.resize(width, 800)
        qtbot.wait(50)
        for pane in panes:
            pane.setCursorWidth(0)
            viewport = pane.viewport()
            whole = rendered(viewport, 0)
            for top in range(0, viewport.height() - 20, 9):
                part = rendered(viewport, top)
                assert np.array_equal(part[top:], whole[top:]), f"a repaint from row {top} differs ({width} px)"
