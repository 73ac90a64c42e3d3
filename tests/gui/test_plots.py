"""The Plots dock in a real window: each figure's items hold the numbers the core computes (checked
against the core called here, not against the widget), exports write a PNG and the core's CSV rows,
and the dock stays usable (cancel, bad input, theme, hover)."""

from __future__ import annotations

import csv
import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, Qt

from tokexplorer.core.analysis.languages import read_parallel_texts, tokens_per_language
from tokexplorer.core.registry import builtin_names, get_builtin
from tokexplorer.core.analysis.sweep import CompressionCurve, split_held_out, sweep
from tokexplorer.core.tables import csv_text
from tokexplorer.core.analysis.token_lengths import length_histogram

from .helpers import wait_settled

BUILTINS = builtin_names()  # every tokenizer in the picker is a reference point: here, the built-ins


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def overlapping(rects) -> list[tuple[int, int]]:
    return [(i, j) for i in range(len(rects)) for j in range(i + 1, len(rects)) if rects[i].intersects(rects[j])]


@pytest.fixture(scope="module")
def corpus(corpora) -> str:
    return (corpora / "en/taylorswift.txt").read_text("utf-8")[:20_000]


def open_plots(qtbot, window, text: str, tab: str):
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    window.plots_dock.show()
    panel = window.plots
    panel.setCurrentWidget(getattr(panel, tab))
    return panel


def test_sweep_plots_the_cores_sequence_lengths_and_reference_points(qtbot, window, corpus):
    panel = open_plots(qtbot, window, corpus, "sweep_tab")
    tab = panel.sweep_tab
    tab.sizes_edit.setText("256,300,400")
    assert tab.run()
    qtbot.waitUntil(lambda: tab.figure.sweep is not None, timeout=60_000)
    train_text, held = split_held_out(corpus, 0.1)
    core = sweep(train_text, [256, 300, 400], eval_text=held, references=[get_builtin(n) for n in BUILTINS])
    xs, ys = tab.figure.trained.getOriginalDataset()
    assert xs.tolist() == [256, 300, 400] and ys.tolist() == [p.tokens for p in core.points]
    rx, ry = tab.figure.references.getData()
    assert np.allclose(rx, np.log10([r.n_vocab for r in core.references]))
    assert ry.tolist() == [r.tokens for r in core.references]
    assert [label.toPlainText() for label in tab.figure.labels] == BUILTINS
    assert {"deepseek-v4", "qwen2.5", "tekken"} <= set(BUILTINS)
    # Vocab sizes 100k-200k (cl100k, DeepSeek, Tekken, Qwen, o200k) sit close: no name covers another,
    # in a plot as large as a workspace gives it; a small one shows those that fit.
    window.plots_dock.setFloating(True)
    window.plots_dock.resize(1000, 800)
    qtbot.waitUntil(lambda: tab.figure.plotItem.vb.height() > 300)
    rects = tab.figure.label_rects()
    assert len(rects) == len(BUILTINS)
    assert overlapping(rects) == []
    assert not any(r.intersects(tab.figure.legend.sceneBoundingRect()) for r in rects)
    tall = tab.figure.plotItem.vb.height()
    window.plots_dock.resize(1000, 300)
    qtbot.waitUntil(lambda: tab.figure.plotItem.vb.height() < tall - 150)
    assert len(tab.figure.label_rects()) >= 4 and overlapping(tab.figure.label_rects()) == []
    assert tab.run_button.isEnabled() and not tab.progress.isVisible()
    # The same run's compression over merges, in the next tab.
    mx, my = panel.compression_tab.figure.curve_line.getData()
    assert mx.tolist() == core.curve.merges and np.allclose(my, core.curve.bytes_per_token)
    # Hover over the gpt2 point: the readout shows its numbers.
    vb = tab.figure.plotItem.vb
    gpt2 = core.references[0]
    tab.figure.scene().sigMouseMoved.emit(vb.mapViewToScene(QPointF(np.log10(gpt2.n_vocab), gpt2.tokens)))
    assert tab.figure.readout.isVisible()
    assert tab.figure.readout.toPlainText().startswith(f"gpt2: vocab 50,257\n{gpt2.tokens:,} tokens")


def test_sweep_exports_a_png_and_the_cores_csv(qtbot, window, corpus, tmp_path):
    panel = open_plots(qtbot, window, corpus, "sweep_tab")
    tab = panel.sweep_tab
    tab.sizes_edit.setText("256,280")
    tab.eval_box.setCurrentIndex(1)  # the whole corpus
    tab.run()
    qtbot.waitUntil(lambda: tab.figure.sweep is not None, timeout=60_000)
    core = sweep(corpus, [256, 280], references=[get_builtin(n) for n in BUILTINS])
    window.dialogs.paths["export"] = str(tmp_path / "sweep.png")
    assert tab.export_png() == tmp_path / "sweep.png"
    data = (tmp_path / "sweep.png").read_bytes()
    assert png_size(data) == (1600, 1000)  # whatever the dock's shape (it once gave 2827 x 500)
    assert b"pHYs" in data and struct.unpack(">II", data[data.index(b"pHYs") + 4:][:8]) == (7559, 7559)  # 192 dpi
    tab.figure.resize(2000, 280)  # a wide, short dock
    assert png_size(tab.png()) == (1600, 1000)
    window.dialogs.paths["export"] = str(tmp_path / "sweep.csv")
    assert tab.export_csv() == tmp_path / "sweep.csv"
    written = (tmp_path / "sweep.csv").read_text("utf-8")
    assert written == csv_text(core.table())
    rows = list(csv.reader(io.StringIO(written)))
    assert rows[1] == ["trained BPE", "256", str(len(corpus.encode("utf-8"))), "1.0"]
    # The dialogs start in the folder exported to last (the first, where nothing was: Documents or home).
    asked = [Path(suggested) for kind, suggested in window.dialogs.asked if kind == "export_path"]
    assert [p.name for p in asked] == ["sweep.png", "sweep.csv"] and asked[1].parent == tmp_path
    assert asked[0].parent != tmp_path


def test_sweep_cancel_and_bad_input_leave_the_tab_usable(qtbot, window, corpus):
    panel = open_plots(qtbot, window, corpus * 3, "sweep_tab")
    tab = panel.sweep_tab
    window.documents.set_text("")
    wait_settled(qtbot, window)
    tab.sizes_edit.setText("256")
    assert not tab.run() and tab.status.text().startswith("No text to train on")
    window.documents.set_text(corpus * 3)
    wait_settled(qtbot, window)
    tab.sizes_edit.setText("256, lots")
    assert not tab.run() and "integers" in tab.status.text()
    tab.sizes_edit.setText("100")
    assert not tab.run() and "too small" in tab.status.text()
    tab.sizes_edit.setText("256,20000")
    assert tab.run()
    assert not tab.run_button.isEnabled()
    tab.cancel()
    qtbot.waitUntil(lambda: tab.run_button.isEnabled(), timeout=60_000)
    assert tab.status.text() == "Cancelled." and tab.figure.sweep is None
    window.close()  # no sweep runs: nothing to ask
    assert not window.isVisible() and "ask_stop_sweep" not in [k for k, _ in window.dialogs.asked]


def _sweepers() -> list:
    import multiprocessing

    return [p for p in multiprocessing.active_children() if p.name == "tokexplorer-training"]


def test_sweep_trains_in_a_child_process_that_cancel_and_closing_end(qtbot, window, corpora, tmp_path,
                                                                      monkeypatch):
    """The sweep's training runs in a process of its own (the window's thread stays free); Cancel
    ends it, and so does closing the window, once the user says so (the window asks first)."""
    from PySide6.QtCore import QThreadPool

    from tokexplorer.core.training.bpe import PURE_PYTHON_VARIABLE

    # The Python merge loop (inherited by the child) keeps the run going long enough to be ended
    # half-way; the compiled one might finish before the test looks at the child.
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")

    big = tmp_path / "big.txt"
    big.write_text((corpora / "en/tinyshakespeare.txt").read_text("utf-8") * 4, "utf-8")
    panel = open_plots(qtbot, window, "hi", "sweep_tab")
    tab = panel.sweep_tab
    window.dialogs.paths["open_text"] = str(big)
    tab.corpus_box.setCurrentIndex(1)
    tab.corpus_box.activated.emit(1)  # as when the user picks it
    tab.pattern_box.setCurrentIndex(tab.pattern_box.findData(None))  # Basic: long merges
    tab.sizes_edit.setText("256,30000")
    for end in ("cancel", "close"):
        assert tab.run() and tab.service.running
        qtbot.waitUntil(lambda: tab.progress.maximum() > 0 and tab.progress.value() > 0, timeout=60_000)
        (child,) = _sweepers()
        assert child.is_alive()
        if end == "cancel":
            tab.cancel_button.click()
            assert tab.status.text() == "Cancelled." and tab.run_button.isEnabled()
        else:
            window.dialogs.stop_sweep_answer = False
            window.close()  # asks first; Cancel keeps the window and the sweep
            assert window.isVisible() and tab.service.running and child.is_alive()
            window.dialogs.stop_sweep_answer = True
            window.close()
            assert not window.isVisible()
            assert [k for k, _ in window.dialogs.asked].count("ask_stop_sweep") == 2
        assert not tab.service.running
        qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount() == 0, timeout=60_000)
        qtbot.waitUntil(lambda: not _sweepers(), timeout=10_000)
        assert tab.figure.sweep is None


def test_sweep_trains_on_a_chosen_file_and_reports_a_bad_one(qtbot, window, corpus, tmp_path):
    panel = open_plots(qtbot, window, "the editor's text is not the corpus", "sweep_tab")
    tab = panel.sweep_tab
    good, bad = tmp_path / "corpus.txt", tmp_path / "latin1.txt"
    good.write_text(corpus, "utf-8")
    bad.write_bytes("caf\xe9\n".encode("latin-1") * 50)
    window.dialogs.paths["open_text"] = str(good)
    tab.corpus_box.setCurrentIndex(1)
    tab.corpus_box.activated.emit(1)  # as when the user picks it
    assert tab.corpus_box.currentText() == "file: corpus.txt"
    tab.sizes_edit.setText("256,300")
    tab.run()
    qtbot.waitUntil(lambda: tab.figure.sweep is not None, timeout=60_000)
    train_text, held = split_held_out(corpus, 0.1)
    assert (tab.figure.sweep.train_bytes, tab.figure.sweep.eval_bytes) == (
        len(train_text.encode("utf-8")), len(held.encode("utf-8")))
    window.dialogs.paths["open_text"] = str(bad)
    tab.corpus_box.activated.emit(1)  # as when the user picks it
    tab.run()
    qtbot.waitUntil(lambda: tab.run_button.isEnabled() and "not UTF-8" in tab.status.text(), timeout=30_000)
    assert "(byte 0xE9 at offset 3): open it with File > Open" in tab.status.text()


def test_compression_follows_a_training_run_announced_on_the_state(qtbot, window):
    tab = window.plots.compression_tab
    curve = CompressionCurve(100)
    for merged in (10, 5, 5):
        curve.add(merged)
    window.state.training_curve.emit(curve)
    xs, ys = tab.figure.curve_line.getData()
    assert xs.tolist() == [1, 2, 3] and ys.tolist() == curve.bytes_per_token
    assert tab.figure.table() == curve.table()
    window.dialogs.paths["export"] = "/no/such/folder/merges.csv"
    assert tab.export_csv() is None and tab.status.text().startswith("Cannot write /no/such/folder/merges.csv")
    # Live: points appended one merge at a time are drawn within 100 ms.
    tab.figure.reset()
    for merge, bpt in [(1, 1.1), (2, 1.25), (3, 1.4)]:
        tab.figure.append(merge, bpt)
    qtbot.waitUntil(lambda: tab.figure.curve_line.getData()[0] is not None
                    and len(tab.figure.curve_line.getData()[0]) == 3, timeout=2000)
    assert tab.figure.curve_line.getData()[1].tolist() == [1.1, 1.25, 1.4]


def test_token_lengths_of_the_current_text_per_tokenizer(qtbot, window, corpora, tmp_path):
    text = (corpora / "multilingual/udhr/udhr_hin.txt").read_text("utf-8")[:4000] + " 👋 code()  \n"
    window.state.set_tokenizer("gpt2")  # the current tokenizer is the first series
    panel = open_plots(qtbot, window, text, "length_tab")
    tab = panel.length_tab
    tab.others.set_checked(["cl100k_base", "llama-sp"])
    qtbot.waitUntil(lambda: [h.tokenizer for h in tab.figure.histograms] == ["gpt2", "cl100k_base", "llama-sp"],
                    timeout=30_000)
    for i, name in enumerate(["gpt2", "cl100k_base", "llama-sp"]):
        core = length_histogram(get_builtin(name).encode(text, allowed_special="none"), name)
        lengths, heights = tab.figure.series(i)
        assert lengths == list(range(len(core.counts))) and heights == list(core.counts), name
    # An edit recomputes them.
    window.documents.set_text("hello world")
    qtbot.waitUntil(lambda: tab.figure.histograms and tab.figure.histograms[0].tokens == 2, timeout=30_000)
    window.dialogs.paths["export"] = str(tmp_path / "lengths.csv")
    tab.export_csv()
    rows = list(csv.reader(io.StringIO((tmp_path / "lengths.csv").read_text("utf-8"))))
    assert rows[0] == ["bytes", "gpt2", "cl100k_base", "llama-sp"]


def test_a_one_token_texts_bar_reads_one_and_no_legend_covers_it(qtbot, window):
    """"hello" is one gpt2 token of 5 bytes: its bar is 1 high, the axis puts 1 at its top, and the
    legend in the top corner ends above it (it once hid the bar's top, which then read 0.77)."""
    window.state.set_tokenizer("gpt2")
    panel = open_plots(qtbot, window, "hello", "length_tab")
    tab = panel.length_tab
    qtbot.waitUntil(lambda: bool(tab.figure.histograms) and tab.figure.histograms[0].tokens == 1, timeout=30_000)
    lengths, heights = tab.figure.series(0)
    assert heights[lengths.index(5)] == 1.0 and sum(heights) == 1.0
    assert tab.status.text() == "gpt2: 1 token, 5.00 bytes/token"
    vb = tab.figure.plotItem.vb
    bar_top = vb.mapViewToScene(QPointF(5.0, 1.0))
    assert vb.sceneBoundingRect().contains(bar_top)
    assert tab.figure.legend.sceneBoundingRect().bottom() < bar_top.y()
    for height in (260, 600):  # the legend keeps its pixels as the dock grows or shrinks
        tab.figure.resize(700, height)
        qtbot.waitUntil(lambda: abs(vb.height() - (height - 80)) < 60)
        assert tab.figure.legend.sceneBoundingRect().bottom() < vb.mapViewToScene(QPointF(5.0, 1.0)).y()


def test_tokens_per_language_table_and_bars_are_the_cores(qtbot, window, tmp_path):
    panel = open_plots(qtbot, window, "hi", "sweep_tab")
    tab = panel.language_tab
    tab.tokenizers.set_checked(["gpt2", "o200k_base"])
    panel.setCurrentWidget(tab)  # counting starts when the tab is first shown
    qtbot.waitUntil(lambda: tab.report is not None and tab.compute_button.isEnabled(), timeout=60_000)
    core = tokens_per_language(read_parallel_texts(), [get_builtin("gpt2"), get_builtin("o200k_base")])
    for i in (0, 1):
        assert tab.figure.ratios(i) == pytest.approx({r.key: r.ratios[i] for r in core.rows}, rel=1e-12)
    # The table holds the same numbers, sorted by the first tokenizer's ratio, and so do the bars.
    keys = tab.row_keys()
    assert keys == [r.key for r in sorted(core.rows, key=lambda r: -r.ratios[0])]
    assert tab.figure.order == keys
    header = [tab.table.horizontalHeaderItem(j).text() for j in range(tab.table.columnCount())]
    assert header == ["language", "script", "gpt2 ×eng", "o200k_base ×eng", "gpt2 tokens", "o200k_base tokens",
                      "characters", "bytes", "title"]
    hin_row = keys.index("hin")
    hin = core.row("hin")
    cells = [tab.table.item(hin_row, j) for j in range(len(header))]
    assert [c.key for c in cells] == ["hindi", "deva", *hin.ratios, *hin.tokens, hin.chars, hin.bytes,
                                      "मानव अधिकारों की सार्वभौम घोषणा"]
    assert [c.text() for c in cells[:4]] == ["Hindi", "Deva", f"{hin.ratios[0]:.2f}", f"{hin.ratios[1]:.2f}"]
    # Hover over Hindi's bars: the readout has its numbers and its title in Devanagari.
    vb = tab.figure.plotItem.vb
    vb.setYRange(keys.index("hin") - 3, keys.index("hin") + 3)  # scrolled to it, as a user would
    tab.figure.scene().sigMouseMoved.emit(vb.mapViewToScene(QPointF(0.5, float(keys.index("hin")))))
    assert tab.figure.readout.toPlainText().splitlines()[:3] == [
        f"Hindi (Deva): {hin.chars:,} characters, {hin.bytes:,} bytes", "मानव अधिकारों की सार्वभौम घोषणा",
        f"gpt2: {hin.tokens[0]:,} tokens, {hin.ratios[0]:.2f}× English"]
    # Sorting the table by language re-orders the bars.
    tab.table.sortItems(0, Qt.SortOrder.AscendingOrder)
    qtbot.waitUntil(lambda: tab.figure.order[0] == "amh")
    assert tab.figure.order == [r.key for r in sorted(core.rows, key=lambda r: r.language)]
    # Export: a PNG, and a CSV whose rows are the core's.
    window.dialogs.paths["export"] = str(tmp_path / "languages.png")
    tab.export_png()
    assert png_size((tmp_path / "languages.png").read_bytes()) == (1600, 2 * (140 + 24 * 56))  # every language
    window.dialogs.paths["export"] = str(tmp_path / "languages.csv")
    tab.export_csv()
    assert (tmp_path / "languages.csv").read_text("utf-8") == csv_text(core.table())


def test_figures_follow_the_dark_theme(qtbot, window):
    figures = [tab.figure for tab in window.plots.tabs]
    light = [f.backgroundBrush().color().name() for f in figures]
    window.state.set_dark(True)
    dark = [f.backgroundBrush().color().name() for f in figures]
    assert set(light) == {"#ffffff"} and set(dark) == {"#1e1e1e"}
    axis = figures[0].plotItem.getAxis("left")
    assert axis.textPen().color().name() == "#dcdcdc"


def test_a_training_run_before_plots_was_first_shown_is_plotted_when_it_is(qtbot, window):
    """The Plots view is made when first shown: a run announced before then is not lost."""
    assert not window.lazy_views["plots"].built
    curve = CompressionCurve(100)
    for merged in (10, 5):
        curve.add(merged)
    window.state.training_curve.emit(curve)
    window.show_view("plots", switch=True)
    assert window.lazy_views["plots"].built
    xs, ys = window.plots.compression_tab.figure.curve_line.getData()
    assert xs.tolist() == [1, 2] and ys.tolist() == curve.bytes_per_token


@pytest.mark.parametrize("width, scale", [(480, 1.0), (700, 1.5)])
def test_the_sweeps_controls_and_the_tabs_fit_a_narrow_dock(qtbot, window, width, scale):
    """As a 1366 px screen at 200 % gives the dock (about 480 px), and at 1.5 times the font: the
    vocab sizes field shows its whole default text, each combo box its whole item, and the tab
    titles fit without scroll arrows, each tab's tooltip its whole title."""
    from .narrow import narrow_dock

    narrow_dock(qtbot, window, "plots", width=width, height=600, scale=scale)
    panel = window.plots
    tab = panel.sweep_tab
    edit = tab.sizes_edit
    assert edit.text() == "256,512,1024,2048,4096"
    frame = 8  # the line edit's frame and its text margins, both sides
    assert edit.fontMetrics().horizontalAdvance(edit.text()) <= edit.width() - frame
    for box in (tab.corpus_box, tab.pattern_box, tab.eval_box):
        for i in range(box.count()):
            assert box.width() >= box.sizeHint().width(), box.itemText(i)  # the longest item, whole
    bar = panel.tabBar()
    assert bar.sizeHint().width() <= panel.width()  # no scroll arrows
    assert [panel.tabToolTip(i) for i in range(panel.count())] == [
        "Sequence length vs vocab size", "Compression over merges", "Token lengths of the current text",
        "Tokens per language"]
