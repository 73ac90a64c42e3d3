"""`ElidedComboBox`: a combo box that may be narrower than its longest item, showing its current
item elided ("BPE, regex sp…") where a plain QComboBox cuts the text at its edge without a sign;
its list still shows each item whole.

It narrows to `min_chars` characters, so a form in a narrow dock need not scroll sideways.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox, QStylePainter


class ElidedComboBox(QComboBox):
    """A QComboBox whose minimum width is `min_chars` characters, its current text elided to fit."""

    def __init__(self, min_chars: int = 10, parent=None):
        super().__init__(parent)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(min_chars)

    def paintEvent(self, event) -> None:
        painter = QStylePainter(self)
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        field = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                            QStyle.SubControl.SC_ComboBoxEditField, self)
        option.currentText = self.fontMetrics().elidedText(option.currentText, Qt.TextElideMode.ElideRight,
                                                           field.width())
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)
