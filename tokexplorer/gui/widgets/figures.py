"""The figures of the plots: pyqtgraph widgets drawing the core's result objects, and PNG export.

Each figure creates its plot items once and updates them with `setData` / `setOpts` when given a
new result (`show(result)`); axes are labelled with units, the mouse shows the values under it (a
crosshair and a readout), and `set_dark` follows the window's theme. The sweep's reference names
are placed where they cover no other name, point or legend (`SweepFigure.place_labels`), and a
legend in a top corner gets room above the data. A PNG is drawn from a twin of the figure laid out
at the PNG's shape (PNG_SIZE pixels, drawn PNG_SCALE times over), whatever the shape on screen.
The same figures render offscreen for the command line: `write_png(result, path)` picks the
figure for the result's type (a `Sweep`, a `CompressionCurve`, a list of `LengthHistogram`, a
`LanguageReport`), creating an offscreen QApplication when there is none, so `tokexplorer sweep
--plot` and `report languages --plot` draw exactly what the window exports.

It computes nothing (the core does) and knows no panel or command.

It runs past 400 lines: one short figure class per result object (sweep, curve, histograms,
languages), the sweep's placing of names, and the PNG export they share.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from PySide6.QtCore import QBuffer, QIODevice, QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFontMetrics, QImage, QPainter

import pyqtgraph as pg  # after PySide6: pyqtgraph uses the Qt binding already imported

from tokexplorer.core.analysis.languages import LanguageReport
from tokexplorer.core.analysis.sweep import CompressionCurve, Sweep
from tokexplorer.core.files.textfile import write_atomic
from tokexplorer.core.headless import use_offscreen
from tokexplorer.core.analysis.token_lengths import LengthHistogram, histogram_table

# Series colours (light theme, dark theme): distinguishable, and the first four for the built-ins.
SERIES = [("#1f77b4", "#64b5f6"), ("#d62728", "#ef9a9a"), ("#2ca02c", "#a5d6a7"), ("#9467bd", "#ce93d8"),
          ("#ff7f0e", "#ffcc80"), ("#17becf", "#80deea"), ("#8c564b", "#bcaaa4"), ("#e377c2", "#f8bbd0")]
THEMES = {False: ("#ffffff", "#202020", "#909090"), True: ("#1e1e1e", "#dcdcdc", "#707070")}  # bg, fg, grid


BUILTIN_SERIES = {"gpt2": 0, "cl100k_base": 1, "o200k_base": 2, "llama-sp": 3}  # same colour in every figure


def series_colour(index: int, dark: bool, name: str = "") -> QColor:
    """A series' colour: a built-in tokenizer's own, else the index's among the rest."""
    if name in BUILTIN_SERIES:
        index = BUILTIN_SERIES[name]
    elif name:
        index = len(BUILTIN_SERIES) + index % (len(SERIES) - len(BUILTIN_SERIES))
    return QColor(SERIES[index % len(SERIES)][1 if dark else 0])


MIN_HEIGHT = 220  # px: below it the axis labels are cut and the legend covers the points
PNG_SIZE = (1600, 1000)  # pixels of an exported figure
PNG_SCALE = 2  # an exported figure is laid out at 1/PNG_SCALE of its pixels and drawn at PNG_SCALE x
PNG_DPI = 96 * PNG_SCALE  # so that an image viewer shows it at its laid-out size
LEGEND_ROOM = 16  # px between the top of the data and the bottom of a legend in the top corner
MARK = 12  # px: a reference point's diamond, which no name covers


class Figure(pg.PlotWidget):
    """A plot with a title, labelled axes, a hover readout and a light or dark theme."""

    def __init__(self, title: str, x_label: str, y_label: str, *, log_x: bool = False, parent=None):
        super().__init__(parent=parent)
        self.setMinimumHeight(MIN_HEIGHT)
        self.dark = False
        self.set_title(title)
        self.plotItem.setLabel("bottom", x_label)
        self.plotItem.setLabel("left", y_label)
        self.plotItem.showGrid(x=True, y=True, alpha=0.25)
        self.plotItem.setLogMode(x=log_x, y=False)
        self.plotItem.setMenuEnabled(False)
        self.legend = self.plotItem.addLegend(offset=(-10, 10))
        self.crosshair = pg.InfiniteLine(angle=90, movable=False)
        self.crosshair.setZValue(20)
        self.readout = pg.TextItem(anchor=(0, 1))
        self.readout.setZValue(30)
        for item in (self.crosshair, self.readout):
            item.hide()
            self.plotItem.addItem(item, ignoreBounds=True)
        self.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self._shown_range: tuple[tuple[float, float], float] | None = None  # x range, top of the data
        self.plotItem.vb.sigResized.connect(self._apply_range)
        self._apply_theme()

    # --- what subclasses provide -----------------------------------------------------------

    def hover(self, x: float, y: float) -> tuple[float, str] | None:
        """(where to put the crosshair, the text) for the mouse at data point (x, y), or None.
        Coordinates are the view's (log10 of the value on a log axis)."""
        return None

    def table(self) -> list[list[object]]:
        """The shown numbers as the core's table (header first), for CSV."""
        return []

    def _recolour(self) -> None:
        """Give the series the current theme's colours."""

    def twin(self) -> "Figure":
        """A new figure of the same kind showing the same data (drawn offscreen for a PNG)."""
        return type(self)()

    # --- range, theme, hover, export ----------------------------------------------------------

    def show_range(self, x_range: tuple[float, float], top: float) -> None:
        """Show x_range and y from 0 to `top`, with room above for a legend in a top corner."""
        self._shown_range = (x_range, top)
        self._apply_range()

    def _apply_range(self) -> None:
        """subtle: the legend keeps its size in pixels while the plot grows and shrinks, so the
        room it needs, in data units, is recomputed whenever the view is resized."""
        if self._shown_range is None:
            return
        x_range, top = self._shown_range
        view = self.plotItem.vb.height()
        legend = self.legend.boundingRect().height() + abs(self.legend.opts["offset"][1]) + LEGEND_ROOM
        if self.legend.items and view > 2 * legend:
            top = top / (1 - legend / view)  # the data ends below the legend's bottom edge
        self.plotItem.setRange(xRange=x_range, yRange=(0, top), padding=0)

    def set_title(self, title: str) -> None:
        self._title = title
        self.plotItem.setTitle(title, color=THEMES[self.dark][1])

    def set_dark(self, dark: bool) -> None:
        if dark != self.dark:
            self.dark = dark
            self._apply_theme()

    def _apply_theme(self) -> None:
        bg, fg, grid = THEMES[self.dark]
        self.setBackground(bg)
        for name in ("left", "bottom"):
            axis = self.plotItem.getAxis(name)
            axis.setPen(pg.mkPen(grid))
            axis.setTextPen(pg.mkPen(fg))
            axis.label.setDefaultTextColor(QColor(fg))
        self.plotItem.titleLabel.setText(self.plotItem.titleLabel.text, color=fg)
        self.legend.setLabelTextColor(fg)
        for _, label in self.legend.items:  # subtle: setLabelTextColor leaves existing labels as drawn
            label.setText(label.text, color=fg)
        self.legend.setBrush(pg.mkBrush(QColor(bg).darker(105) if not self.dark else QColor(bg).lighter(130)))
        self.crosshair.setPen(pg.mkPen(grid, style=Qt.PenStyle.DashLine))
        self.readout.fill = pg.mkBrush(QColor(bg))
        self.readout.border = pg.mkPen(grid)
        self.readout.setColor(QColor(fg))
        self._recolour()

    def _on_mouse_moved(self, pos) -> None:
        vb = self.plotItem.vb
        if not vb.sceneBoundingRect().contains(pos):
            self.hide_readout()
            return
        point = vb.mapSceneToView(pos)
        found = self.hover(point.x(), point.y())
        if found is None:
            self.hide_readout()
            return
        x, text = found
        self.crosshair.setPos(x)
        self.crosshair.show()
        self.readout.setText(text)
        # Keep the readout inside the plot: left of the mouse on the right half, below near the top.
        (x0, x1), (y0, y1) = vb.viewRange()
        self.readout.setAnchor((1 if point.x() > (x0 + x1) / 2 else 0, 0 if point.y() > (y0 + y1) / 2 else 1))
        self.readout.setPos(point.x(), point.y())
        self.readout.show()

    def hide_readout(self) -> None:
        self.crosshair.hide()
        self.readout.hide()

    def png(self, width: int = PNG_SIZE[0], height: int = PNG_SIZE[1]) -> bytes:
        """The figure as a PNG of width x height pixels: laid out at 1/PNG_SCALE of that size and
        drawn PNG_SCALE times over, so its text is as legible as on screen at any figure size."""
        from PySide6.QtWidgets import QApplication

        if self.isVisible():
            # subtle: drawing the figure as shown keeps the dock's shape (a wide dock gave
            # 2827 x 500 with a tiny legend): draw a twin, laid out at the PNG's shape, instead.
            twin = self.twin()
            twin.set_dark(self.dark)
            try:
                return twin.png(width, height)
            finally:
                twin.deleteLater()
        self.hide_readout()
        # subtle: a hidden view lays out its scene only when shown; shown off screen, the figure
        # gets exactly the PNG's shape, so fonts and margins are those of a window that size.
        self.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen)
        self.resize(round(width / PNG_SCALE), round(height / PNG_SCALE))
        self.show()
        QApplication.processEvents()
        # The scene drawn onto an image of PNG_SCALE device pixels per pixel: text and lines drawn
        # at that resolution, not an enlarged bitmap. subtle: the scene, not the widget: a
        # QGraphicsView's own render applies the scale twice; and not pyqtgraph's ImageExporter,
        # which leaves the legend at its pixel size while the rest grows.
        image = QImage(width, height, QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(PNG_SCALE)
        image.fill(QColor(THEMES[self.dark][0]))
        painter = QPainter(image)
        painter.setRenderHints(QPainter.RenderHint.Antialiasing | QPainter.RenderHint.TextAntialiasing)
        self.scene().render(painter, QRectF(0, 0, width / PNG_SCALE, height / PNG_SCALE), self.sceneRect())
        painter.end()
        dots_per_metre = round(PNG_DPI / 0.0254)
        image.setDotsPerMeterX(dots_per_metre)
        image.setDotsPerMeterY(dots_per_metre)
        buffer = QBuffer()
        buffer.open(QIODevice.OpenModeFlag.WriteOnly)
        image.save(buffer, "PNG")
        return bytes(buffer.data())


def _distance(rect: QRectF, point: QPointF) -> float:
    """From a point to the nearest point of a rectangle (0 inside it)."""
    dx = max(rect.left() - point.x(), 0.0, point.x() - rect.right())
    dy = max(rect.top() - point.y(), 0.0, point.y() - rect.bottom())
    return float(np.hypot(dx, dy))


def _nearest(values: np.ndarray, x: float) -> int:
    return int(np.argmin(np.abs(values - x))) if len(values) else -1


class SweepFigure(Figure):
    """Sequence length vs vocab size: the trained BPE at each size, and reference tokenizers."""

    def __init__(self, parent=None):
        super().__init__("Sequence length vs vocab size", "vocab size (tokens, log scale)",
                         "length of the evaluation text (tokens)", log_x=True, parent=parent)
        self.sweep: Sweep | None = None
        self.trained = self.plotItem.plot([], [], name="BPE trained here", symbol="o", symbolSize=7)
        self.references = pg.ScatterPlotItem(size=11, symbol="d", name="ready-made tokenizers (same text)")
        self.plotItem.addItem(self.references)
        # Vocab sizes are powers of two or near them: label the axis 256, 512, 1k ... 256k.
        self.plotItem.getAxis("bottom").setTicks([
            [(np.log10(2 ** k), f"{2 ** k}" if k < 10 else f"{2 ** (k - 10)}k") for k in range(8, 19)], []])
        self.labels: list[pg.TextItem] = []  # one per reference point, reused
        self.leaders: list[pg.PlotCurveItem] = []  # from a point to its name, when lifted off it
        self.plotItem.vb.sigRangeChanged.connect(self.place_labels)
        self.plotItem.vb.sigResized.connect(self.place_labels)
        self._recolour()

    def twin(self) -> "SweepFigure":
        twin = SweepFigure()
        if self.sweep is not None:
            twin.show_sweep(self.sweep)
        return twin

    def show_sweep(self, sweep: Sweep) -> None:
        self.sweep = sweep
        self.trained.setData([p.vocab_size for p in sweep.points], [p.tokens for p in sweep.points])
        refs = sweep.references
        self.references.setData([np.log10(r.n_vocab) for r in refs], [r.tokens for r in refs])
        while len(self.labels) < len(refs):
            label = pg.TextItem(anchor=(0.5, 1))
            leader = pg.PlotCurveItem()
            self.plotItem.addItem(label)
            self.plotItem.addItem(leader, ignoreBounds=True)
            self.labels.append(label)
            self.leaders.append(leader)
        for label, r in zip(self.labels, refs):
            label.setText(r.name)
            label.setPos(np.log10(r.n_vocab), r.tokens)
            label.show()
        for label, leader in zip(self.labels[len(refs):], self.leaders[len(refs):]):
            label.hide()
            leader.hide()
        self.set_title(f"Sequence length vs vocab size ({sweep.eval_source}, "
                               f"{sweep.eval_bytes:,} bytes)")
        self._apply_theme()
        sizes = [p.vocab_size for p in sweep.points] + [r.n_vocab for r in refs]
        top = max([p.tokens for p in sweep.points] + [r.tokens for r in refs])
        self.show_range((np.log10(min(sizes)) - 0.1, np.log10(max(sizes)) + 0.15), top * 1.08)
        self.place_labels()

    def place_labels(self) -> None:
        """Put each reference point's name at the nearest place around its diamond (above, below,
        beside, then further out with a thin line to it) where it overlaps no name placed before,
        no diamond and not the legend, inside the plot: tokenizers of similar vocab size (cl100k,
        DeepSeek, Tekken, Qwen, o200k) would otherwise write over each other. A name with no such
        place in a small plot is hidden (the hover readout names every point). In pixels, so
        again whenever the view is zoomed or resized."""
        if self.sweep is None:
            return
        refs = self.sweep.references
        vb = self.plotItem.vb
        taken = [self.legend.sceneBoundingRect()] if self.legend.items else []
        points = [vb.mapViewToScene(QPointF(np.log10(r.n_vocab), r.tokens)) for r in refs]
        half = MARK / 2
        taken += [QRectF(p.x() - half, p.y() - half, MARK, MARK) for p in points]
        inside = vb.sceneBoundingRect()
        lines: list[QRectF] = []  # the leader lines drawn, as thin boxes
        for i in sorted(range(len(refs)), key=lambda i: (refs[i].n_vocab, refs[i].name)):
            label, point = self.labels[i], points[i]
            size = label.boundingRect()  # pixels: a text item ignores the view's scaling
            w, h = size.width(), size.height()
            x, y = point.x(), point.y()
            side = w / 2 + half

            def above(k: int, shift: float) -> QRectF:
                return QRectF(x - w / 2 + shift, y - half - (k + 1) * h, w, h)

            def below(k: int, shift: float) -> QRectF:
                return QRectF(x - w / 2 + shift, y + half + k * h, w, h)

            # nearest first: just above or below the diamond, beside it, then shifted to either
            # side and rows further out (those get a leader line)
            candidates = [above(0, 0.0), below(0, 0.0), QRectF(x + half, y - h / 2, w, h),
                          QRectF(x - half - w, y - h / 2, w, h)]
            candidates += [place(k, shift) for k in range(len(refs) + 1) for shift in (0.0, -side, side)
                           for place in (above, below) if (k, shift) != (0, 0.0)]
            others = [p for j, p in enumerate(points) if j != i]

            def lifted(r: QRectF) -> bool:
                """Off its diamond: a line leads to it."""
                return abs(r.center().y() - y) > h or not r.left() - half <= x <= r.right() + half

            def end_of_line(r: QRectF) -> QPointF:
                """Where the line from the diamond meets the name's box."""
                return QPointF(min(max(x, r.left()), r.right()), r.bottom() if r.center().y() < y else r.top())

            def line_box(r: QRectF) -> QRectF:
                end = end_of_line(r)
                start_y = y - half if end.y() < y else y + half  # from the diamond's edge
                return QRectF(QPointF(min(x, end.x()) - 1, min(start_y, end.y())),
                              QPointF(max(x, end.x()) + 1, max(start_y, end.y())))

            def fits(r: QRectF, crossing: bool) -> bool:
                """Inside the plot, on nothing placed (nor, unless `crossing`, on a line, its own
                line crossing nothing); and, unless a line leads to it, nearer its own diamond
                than any other: a name beside a neighbour's diamond reads as the neighbour's."""
                if not inside.contains(r) or any(r.intersects(t) for t in taken + ([] if crossing else lines)):
                    return False
                if lifted(r):
                    return crossing or not any(line_box(r).intersects(t) for t in taken)
                own = _distance(r, point)
                return all(_distance(r, p) > own for p in others)

            # a place where lines cross nothing; failing that, one where they may cross
            rect = next((r for crossing in (False, True) for r in candidates if fits(r, crossing)), None)
            label.setVisible(rect is not None)  # no room in a small plot: the readout still names it
            if rect is None:
                self.leaders[i].hide()
                continue
            # the anchor: which point of the label's box sits on the diamond
            label.setAnchor(((x - rect.left()) / w, (y - rect.top()) / h))
            taken.append(rect)
            # a name lifted off its diamond gets a thin line to it
            leader = self.leaders[i]
            if lifted(rect):
                lines.append(line_box(rect))
                start, stop = vb.mapSceneToView(QPointF(x, y)), vb.mapSceneToView(end_of_line(rect))
                leader.setData([start.x(), stop.x()], [start.y(), stop.y()])
                leader.show()
            else:
                leader.hide()

    def label_rects(self) -> list[QRectF]:
        """Where the reference names are drawn (scene pixels), for tests."""
        return [label.mapRectToScene(label.boundingRect()) for label in self.labels if label.isVisible()]

    def _recolour(self) -> None:
        if not hasattr(self, "labels"):
            return
        c = series_colour(0, self.dark)
        self.trained.setPen(pg.mkPen(c, width=2))
        self.trained.setSymbolBrush(c)
        self.trained.setSymbolPen(c)
        r = series_colour(1, self.dark)
        self.references.setBrush(pg.mkBrush(r))
        self.references.setPen(pg.mkPen(r))
        for label in self.labels:
            label.setColor(QColor(THEMES[self.dark][1]))
        for leader in self.leaders:
            leader.setPen(pg.mkPen(THEMES[self.dark][2], width=1))

    def points(self) -> list[tuple[str, int, int]]:
        """(series, vocab size, tokens) of every point, trained first: for the readout and tests."""
        if self.sweep is None:
            return []
        return ([("BPE", p.vocab_size, p.tokens) for p in self.sweep.points]
                + [(r.name, r.n_vocab, r.tokens) for r in self.sweep.references])

    def hover(self, x, y):
        points = self.points()
        if not points:
            return None
        (x0, x1), (y0, y1) = self.plotItem.vb.viewRange()
        xs = np.log10([p[1] for p in points])
        ys = np.array([p[2] for p in points], dtype=float)
        i = int(np.argmin(((xs - x) / (x1 - x0)) ** 2 + ((ys - y) / (y1 - y0)) ** 2))
        name, size, tokens = points[i]
        per = self.sweep.eval_bytes / tokens if tokens else 0
        return xs[i], f"{name}: vocab {size:,}\n{tokens:,} tokens, {per:.2f} bytes/token"

    def table(self):
        return self.sweep.table() if self.sweep else []


class CompressionFigure(Figure):
    """Bytes per token of the training corpus after each merge; grows live with `append`.

    Appends are buffered and drawn at most every 100 ms: a setData per merge would redraw
    thousands of times a second while training runs.
    """

    def __init__(self, parent=None):
        super().__init__("Compression over merges", "merges learned",
                         "bytes per token (training corpus)", parent=parent)
        self.merges: list[int] = []
        self.bytes_per_token: list[float] = []
        self.curve_line = self.plotItem.plot([], [], name="bytes per token")
        self.legend.anchor((1, 1), (1, 1), offset=(-10, -10))  # the curve rises: bottom right is free
        self.source: CompressionCurve | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(100)
        self._timer.timeout.connect(self._draw)
        self._recolour()

    def twin(self) -> "CompressionFigure":
        twin = CompressionFigure()
        twin.merges, twin.bytes_per_token, twin.source = list(self.merges), list(self.bytes_per_token), self.source
        twin._draw()
        twin.set_title(self._title)
        return twin

    def set_data(self, merges: Sequence[int], bytes_per_token: Sequence[float]) -> None:
        """Replace the curve (e.g. a finished run)."""
        self.merges, self.bytes_per_token = list(merges), list(bytes_per_token)
        self.source = None
        self._draw()

    def show_curve(self, curve: CompressionCurve, title: str = "") -> None:
        self.set_data(curve.merges, curve.bytes_per_token)
        self.source = curve
        title = title or f"Compression over merges ({curve.n_bytes:,} bytes of training text)"
        if title != self._title:  # a live run shows a new curve ten times a second: draw only that
            self._title = title
            self.set_title(title)
            self._apply_theme()

    def append(self, merge: int, bytes_per_token: float) -> None:
        """One more merge (live training): drawn within 100 ms."""
        self.merges.append(merge)
        self.bytes_per_token.append(bytes_per_token)
        self.source = None
        if not self._timer.isActive():
            self._timer.start()

    def reset(self) -> None:
        """No curve (a new training run starts). subtle: not `clear`, which PlotWidget sets on each
        instance (it forwards to its PlotItem) and so would shadow a method of that name."""
        self.set_data([], [])

    def _draw(self) -> None:
        self._timer.stop()
        self.curve_line.setData(np.asarray(self.merges, dtype=float), np.asarray(self.bytes_per_token))

    def _recolour(self) -> None:
        if hasattr(self, "curve_line"):
            self.curve_line.setPen(pg.mkPen(series_colour(0, self.dark), width=2))

    def hover(self, x, y):
        i = _nearest(np.asarray(self.merges, dtype=float), x)
        if i < 0:
            return None
        return self.merges[i], f"after {self.merges[i]:,} merges\n{self.bytes_per_token[i]:.3f} bytes/token"

    def table(self):
        if self.source is not None:
            return self.source.table()
        return [["merges", "bytes_per_token"]] + [[m, round(b, 6)] for m, b in zip(self.merges, self.bytes_per_token)]


class LengthFigure(Figure):
    """Token-length histogram: tokens per length in bytes, one bar series per tokenizer."""

    def __init__(self, parent=None):
        super().__init__("Token lengths", "token length (bytes of text)", "tokens", parent=parent)
        self.histograms: list[LengthHistogram] = []
        self.bars: list[pg.BarGraphItem] = []  # one per series, reused

    def twin(self) -> "LengthFigure":
        twin = LengthFigure()
        twin.show_histograms(self.histograms, self._title)
        return twin

    def show_histograms(self, histograms: Sequence[LengthHistogram], title: str = "") -> None:
        self.histograms = list(histograms)
        n = max(len(self.histograms), 1)
        width = 0.8 / n
        while len(self.bars) < len(self.histograms):
            bar = pg.BarGraphItem(x=[], height=[], width=width)
            self.plotItem.addItem(bar)
            self.bars.append(bar)
        self.legend.clear()
        for i, (bar, h) in enumerate(zip(self.bars, self.histograms)):
            xs = np.arange(len(h.counts), dtype=float) - 0.4 + width * (i + 0.5)
            bar.setOpts(x=xs, height=np.asarray(h.counts, dtype=float), width=width)
            bar.show()
            self.legend.addItem(bar, f"{h.tokenizer}: {h.tokens:,} token{'s' * (h.tokens != 1)}, "
                                     f"{h.mean:.2f} bytes/token")
        for bar in self.bars[len(self.histograms):]:
            bar.hide()
        self.set_title(title or (f"Token lengths ({self.histograms[0].bytes:,} bytes of text)"
                                         if self.histograms else "Token lengths"))
        self._apply_theme()
        longest = max((len(h.counts) for h in self.histograms), default=2)
        tallest = max((max(h.counts) for h in self.histograms if h.counts), default=1)
        # Length 0 (a lone SentencePiece "▁") gets a column only when some tokenizer has one.
        first = -0.5 if any(h.counts[:1] not in ((), (0,)) for h in self.histograms) else 0.5
        # Lengths and counts are whole numbers: no tick at 2.5 bytes or half a token.
        self.plotItem.getAxis("bottom").setTickSpacing(1 if longest <= 24 else 5, 1)
        left = self.plotItem.getAxis("left")
        if tallest <= 8:
            left.setTickSpacing(1, 1)
        else:
            left.setTickSpacing()  # pyqtgraph's own
        self.show_range((first - 0.1, longest - 0.4), tallest * 1.05)

    def _recolour(self) -> None:
        for i, (bar, h) in enumerate(zip(getattr(self, "bars", []), getattr(self, "histograms", []))):
            c = series_colour(i, self.dark, h.tokenizer)
            bar.setOpts(brush=pg.mkBrush(c), pen=pg.mkPen(c.darker(130)))

    def series(self, index: int) -> tuple[list[int], list[float]]:
        """(lengths in bytes, bar heights) of one series as drawn: for tests."""
        opts = self.bars[index].opts
        offset = -0.4 + opts["width"] * (index + 0.5)
        return np.rint(np.asarray(opts["x"]) - offset).astype(int).tolist(), np.asarray(opts["height"]).tolist()

    def hover(self, x, y):
        if not self.histograms:
            return None
        k = int(round(x))
        if k < 0 or k >= max(len(h.counts) for h in self.histograms):
            return None
        lines = [f"{k} byte{'s' if k != 1 else ''}:"]
        for h in self.histograms:
            n = h.counts[k] if k < len(h.counts) else 0
            lines.append(f"{h.tokenizer}: {n:,} tokens ({100 * n / max(h.tokens, 1):.1f}%)")
        return k, "\n".join(lines)

    def table(self):
        return histogram_table(self.histograms) if self.histograms else []


class LanguageFigure(Figure):
    """Tokens per language relative to English: horizontal bars, one series per tokenizer."""

    def __init__(self, parent=None):
        super().__init__("Tokens per language, relative to English", "tokens ÷ English tokens (same text)",
                         "", parent=parent)
        self.report: LanguageReport | None = None
        self.order: list[str] = []  # keys, top to bottom
        self.bars: list[pg.BarGraphItem] = []
        self.english = pg.InfiniteLine(pos=1.0, angle=90, movable=False)
        self.plotItem.addItem(self.english, ignoreBounds=True)
        self.crosshair.setAngle(0)  # a language is a row: the crosshair marks it across
        self.plotItem.invertY(True)
        self.plotItem.showGrid(x=True, y=False, alpha=0.25)
        self.legend.anchor((1, 1), (1, 1), offset=(-10, -10))  # where the bars are short

    def twin(self) -> "LanguageFigure":
        twin = LanguageFigure()
        if self.report is not None:
            twin.show_report(self.report, self.order)
        return twin

    def show_report(self, report: LanguageReport, order: Sequence[str] | None = None) -> None:
        """Bars in `order` (keys, top first; default: the report's rows in their order)."""
        self.report = report
        self.order = [r.key for r in report.rows] if order is None else list(order)
        rows = [report.row(k) for k in self.order]
        n = max(len(report.tokenizers), 1)
        height = 0.8 / n
        while len(self.bars) < len(report.tokenizers):
            bar = pg.BarGraphItem(x0=[], y=[], height=height, width=[])
            self.plotItem.addItem(bar)
            self.bars.append(bar)
        self.legend.clear()
        for i, (bar, name) in enumerate(zip(self.bars, report.tokenizers)):
            ys = np.arange(len(rows), dtype=float) - 0.4 + height * (i + 0.5)
            bar.setOpts(x0=np.zeros(len(rows)), y=ys, height=height,
                        width=np.array([r.ratios[i] for r in rows]))
            bar.show()
            self.legend.addItem(bar, name)
        for bar in self.bars[len(report.tokenizers):]:
            bar.hide()
        left = self.plotItem.getAxis("left")
        left.setTicks([[(j, r.language) for j, r in enumerate(rows)]])
        # Room for the longest name, so none is cut at the figure's edge.
        metrics = QFontMetrics(left.style.get("tickFont") or left.font())
        left.setWidth(max([metrics.horizontalAdvance(r.language) for r in rows] + [40]) + 14)
        self._apply_theme()
        longest = max([x for r in rows for x in r.ratios] + [1.0])
        vb = self.plotItem.vb
        vb.setLimits(xMin=0, xMax=longest * 1.15, yMin=-0.6, yMax=len(rows) - 0.4)
        vb.setMouseEnabled(x=False, y=True)
        # As many languages as fit legibly (a few pixels per bar); drag or scroll for the rest.
        fit = max(8, (self.height() - 80) // (8 + 5 * n)) if self.isVisible() else len(rows)
        self.plotItem.setRange(xRange=(0, longest * 1.12), yRange=(-0.6, min(fit, len(rows)) - 0.4), padding=0)

    def _recolour(self) -> None:
        names = self.report.tokenizers if getattr(self, "report", None) is not None else ()
        for i, (bar, name) in enumerate(zip(getattr(self, "bars", []), names)):
            bar.setOpts(brush=pg.mkBrush(series_colour(i, self.dark, name)), pen=None)  # thin bars: no outline
        if hasattr(self, "english"):
            self.english.setPen(pg.mkPen(THEMES[self.dark][1], width=1, style=Qt.PenStyle.DashLine))

    def ratios(self, index: int) -> dict[str, float]:
        """key -> bar length of one tokenizer's series as drawn: for tests."""
        return dict(zip(self.order, np.asarray(self.bars[index].opts["width"]).tolist()))

    def hover(self, x, y):
        if self.report is None or not self.order:
            return None
        j = int(round(y))
        if not 0 <= j < len(self.order):
            return None
        r = self.report.row(self.order[j])
        lines = [f"{r.language} ({r.script}): {r.chars:,} characters, {r.bytes:,} bytes", r.title]
        lines += [f"{t}: {n:,} tokens, {q:.2f}× English" for t, n, q in zip(self.report.tokenizers, r.tokens, r.ratios)]
        return j, "\n".join(lines)

    def table(self):
        return self.report.table() if self.report else []


# --- without a window ---------------------------------------------------------------------------


def ensure_app():
    """The QApplication, created offscreen when there is none and no display to show one on."""
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    if app is None:
        use_offscreen()
        app = QApplication(["tokexplorer"])
    return app


def figure_for(result, *, dark: bool = False) -> Figure:
    """A figure showing a core result: Sweep, CompressionCurve, [LengthHistogram], LanguageReport."""
    if isinstance(result, Sweep):
        fig: Figure = SweepFigure()
        fig.show_sweep(result)
    elif isinstance(result, CompressionCurve):
        fig = CompressionFigure()
        fig.show_curve(result)
    elif isinstance(result, LanguageReport):
        fig = LanguageFigure()
        fig.show_report(result)
    elif isinstance(result, (list, tuple)) and all(isinstance(h, LengthHistogram) for h in result):
        fig = LengthFigure()
        fig.show_histograms(result)
    else:
        raise TypeError(f"no figure for {type(result).__name__}")
    fig.set_dark(dark)
    return fig


def figure_size(result) -> tuple[int, int]:
    """Pixels of the PNG: the language chart grows with the number of languages (each row as tall
    as in a window, drawn PNG_SCALE times over)."""
    if isinstance(result, LanguageReport):
        return PNG_SIZE[0], PNG_SCALE * (140 + (12 + 6 * len(result.tokenizers)) * len(result.rows))
    return PNG_SIZE


def write_png(result, path, *, dark: bool = False, size: tuple[int, int] | None = None) -> int:
    """Draw a core result offscreen and write it as a PNG (atomically); returns the bytes written."""
    ensure_app()
    fig = figure_for(result, dark=dark)
    width, height = size or figure_size(result)
    data = fig.png(width, height)
    fig.deleteLater()
    write_atomic(path, data)
    return len(data)
