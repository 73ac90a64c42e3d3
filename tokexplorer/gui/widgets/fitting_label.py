"""`FittingLabel`: one line of text that shows the fullest of its forms that fits its width.

A narrow compare pane or a squeezed status bar says "sel.: 1,121 tokens" rather than cutting
"selection: 1,121 tokens (1,121 whole) · 400 chars · 1,1…" to "s"; the fullest form is the
tooltip. The caller gives the forms (what each may leave out is its business); this module only
measures and picks. It does not wrap lines.
"""

from __future__ import annotations

import html
import re

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import QLabel, QSizePolicy

TAG = re.compile(r"<[^>]*>")
BOLD = re.compile(r"<b>(.*?)</b>", re.S)


def plain(form: str) -> str:
    """The text a rich-text form shows.

    >>> plain("<b>4</b> tokens &middot; -2")
    '4 tokens · -2'
    """
    return html.unescape(TAG.sub("", form))


class FittingLabel(QLabel):
    """One line: the first of its forms (fullest first) that fits the label's width, the fullest
    as its tooltip (unless given one). Its size hint is the fullest form's width, its minimum the
    shortest's, so a layout that squeezes it keeps the shortest form whole.

    Rich-text forms may use <b> and spans that change only the colour (their width is measured
    with the label's font, bold where <b> says; measuring a QTextDocument costs ~0.2 ms a form).
    """

    def __init__(self, parent=None, *, rich: bool = False):
        super().__init__(parent)
        self.rich = rich
        self.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
        self.forms: list[str] = []
        self._bold: QFontMetrics | None = None  # of the label's font in bold, made when first needed
        self._widths: tuple[int, int] | None = None  # of the fullest and the shortest form, once measured

    def set_forms(self, forms: list[str], tip: str | None = None) -> None:
        self.setToolTip(tip if tip is not None else forms[0] if forms else "")
        if forms != self.forms:
            self.forms, self._widths = forms, None
            self.updateGeometry()
            parent = self.parentWidget()
            if (self.sizePolicy().horizontalPolicy() != QSizePolicy.Policy.Ignored and parent is not None
                    and parent.layout() is not None):
                # subtle: else the label keeps its old width until the layout's turn comes, and
                # says, until then, the form that fitted that width ("" after an empty one).
                parent.layout().activate()
        self._fit()

    def text_width(self, form: str) -> int:
        """How wide `form` is drawn in this label's font."""
        fm = self.fontMetrics()
        if not self.rich:
            return fm.horizontalAdvance(form)
        if self._bold is None:
            bold = QFont(self.font())
            bold.setBold(True)
            self._bold = QFontMetrics(bold)
        bfm = self._bold
        extra = sum(bfm.horizontalAdvance(s) - fm.horizontalAdvance(s) for s in map(plain, BOLD.findall(form)))
        return fm.horizontalAdvance(plain(form)) + extra + 1  # +1: the pixel a glyph may round up to

    def _fit(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        fitting = next((f for f in self.forms if self.text_width(f) <= width), None)
        if fitting is None and self.forms:  # narrower than the shortest form: its start, elided
            shortest = plain(self.forms[-1]) if self.rich else self.forms[-1]
            fitting = self.fontMetrics().elidedText(shortest, Qt.TextElideMode.ElideRight, width)
            if self.rich:
                fitting = html.escape(fitting)
        self.setText(fitting or "")

    def _hint(self, shortest: bool) -> QSize:
        # One line: its height is the font's (not QLabel's hint, which lays the rich text out
        # again after every change of text: layouts ask for hints several times a keystroke).
        frame = self.size() - self.contentsRect().size()
        height = self.fontMetrics().height() + frame.height() + 2 * self.margin()
        if not self.forms:
            return QSize(0, height)
        if self._widths is None:
            self._widths = (self.text_width(self.forms[0]), self.text_width(self.forms[-1]))
        return QSize(self._widths[shortest] + frame.width() + 2 * self.margin(), height)

    def sizeHint(self) -> QSize:
        return self._hint(shortest=False)

    def minimumSizeHint(self) -> QSize:
        return self._hint(shortest=True)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event) -> None:
        super().changeEvent(event)
        if event.type() == QEvent.Type.FontChange:
            self._bold, self._widths = None, None
            self.updateGeometry()
            self._fit()
