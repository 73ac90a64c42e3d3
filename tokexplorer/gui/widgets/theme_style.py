"""The application's style: Fusion, with check boxes and radio buttons that stay visible in the
dark theme.

Fusion draws a check box as a box filled with the palette's Base, outlined in Window darkened by
40 %: with the dark palette (`colours.application_palette`) that is a (30, 30, 30) box with a
(32, 32, 34) edge on a (45, 45, 48) window, which one can hardly see, checked or not; the same
goes for the check boxes in list views and for radio buttons. `ThemeStyle` draws those indicators
itself when the palette is dark: a light edge, and when checked a filled accent box with a white
tick (a dot for a radio button, a bar for a partly checked box). Light palettes get Fusion's own.

It holds no colours of tokens (colours.py does) and knows no widget.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleFactory

EDGE = QColor(170, 170, 176)  # an unchecked indicator's edge on a dark window
ACCENT = QColor(66, 133, 214)  # a checked indicator's fill
CHECKS = (QStyle.PrimitiveElement.PE_IndicatorCheckBox, QStyle.PrimitiveElement.PE_IndicatorItemViewItemCheck)


class ThemeStyle(QProxyStyle):
    """Fusion, with dark-theme check boxes and radio buttons one can see."""

    def __init__(self):
        super().__init__(QStyleFactory.create("Fusion"))

    def drawPrimitive(self, element, option, painter, widget=None) -> None:
        radio = element == QStyle.PrimitiveElement.PE_IndicatorRadioButton
        if (element not in CHECKS and not radio) or option.palette.color(QPalette.ColorRole.Window).lightness() > 128:
            super().drawPrimitive(element, option, painter, widget)
            return
        state = option.state
        on = bool(state & QStyle.StateFlag.State_On)
        partly = bool(state & QStyle.StateFlag.State_NoChange)
        enabled = bool(state & QStyle.StateFlag.State_Enabled)
        side = min(option.rect.width(), option.rect.height()) - 2
        box = QRectF(0, 0, side, side)
        box.moveCenter(QRectF(option.rect).center())
        edge = EDGE if enabled else EDGE.darker(160)
        accent = ACCENT if enabled else ACCENT.darker(180)
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setPen(QPen(accent if on or partly else edge, 1.2))
        painter.setBrush(accent if on or partly else option.palette.color(QPalette.ColorRole.Base))
        if radio:
            painter.drawEllipse(box)
            if on:
                dot = QRectF(0, 0, side * 0.4, side * 0.4)
                dot.moveCenter(box.center())
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(QColor("white"))
                painter.drawEllipse(dot)
        else:
            painter.drawRoundedRect(box, 2, 2)
            mark = QPen(QColor("white"), max(1.5, side / 7), Qt.PenStyle.SolidLine, Qt.PenCapStyle.RoundCap,
                        Qt.PenJoinStyle.RoundJoin)
            painter.setPen(mark)
            painter.setBrush(Qt.BrushStyle.NoBrush)
            if partly:
                painter.drawLine(QPointF(box.left() + side * 0.25, box.center().y()),
                                 QPointF(box.right() - side * 0.25, box.center().y()))
            elif on:
                tick = QPainterPath(QPointF(box.left() + side * 0.22, box.top() + side * 0.52))
                tick.lineTo(box.left() + side * 0.42, box.top() + side * 0.72)
                tick.lineTo(box.left() + side * 0.78, box.top() + side * 0.30)
                painter.drawPath(tick)
        painter.restore()
