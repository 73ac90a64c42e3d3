"""The training workbench with the real trainer in a real child process: the result joins the
picker and colours the editor, Cancel keeps exactly the first merges of a full run, bad settings
are refused with a message, SentencePiece trains too, and saved files load back.

The trained tokenizer lives in the tokenizing server: what it holds is checked by the ids it gives
(`server_ids`) against a tokenizer trained, or built from the merge log, in the test's process."""

from __future__ import annotations

import subprocess
import sys

import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent

from tokexplorer.core.backends.trained_bpe import BPETokenizer
from tokexplorer.core.training.bpe import PURE_PYTHON_VARIABLE, iter_train, train
from tokexplorer.core.patterns import NAMED_PATTERNS
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.training.sentencepiece import llama2_options, train_sentencepiece
from tokexplorer.server.protocol import EncodeIds

from .helpers import wait_settled

TIMEOUT = 120_000  # ms: the machines running the tests are shared and slow


@pytest.fixture
def small_corpus(corpora, tmp_path):
    path = tmp_path / "swift.txt"
    path.write_text((corpora / "en/taylorswift.txt").read_text("utf-8")[:20_000], "utf-8")
    return path


def run_training(qtbot, panel):
    """Click Train and wait for the result; a failure fails the test with its message."""
    panel.train_button.click()
    assert panel.service.running, panel.message.text()
    qtbot.waitUntil(lambda: not panel.service.running, timeout=TIMEOUT)
    assert panel.result is not None, panel.message.text()
    return panel.result


def server_ids(qtbot, window, name: str, text: str, policy: str = "all") -> list[int]:
    """The ids the tokenizing server gives `text` with the tokenizer `name` (a fresh encode)."""
    answers = []
    window.state.server.ask(EncodeIds(name, text, policy), answers.append, answers.append)
    qtbot.waitUntil(lambda: bool(answers), timeout=TIMEOUT)
    assert not isinstance(answers[0], str), answers[0]
    return answers[0].tolist()


def picker_names(window) -> list[str]:
    box = window.tokenizer_box
    return [box.itemText(i) for i in range(box.count())]


def test_small_corpus_trains_joins_the_picker_and_colours_the_editor(qtbot, window, small_corpus):
    panel = window.training_panel
    panel.set_paths([small_corpus])
    panel.vocab_spin.setValue(400)
    assert "1 file" in panel.corpus_label.text() and panel.preview.toPlainText()
    result = run_training(qtbot, panel)
    text = small_corpus.read_text("utf-8")
    expected = train(text, 400, pattern="gpt4")
    assert (result.info.family, result.info.n_vocab, result.info.split_pattern) == ("bpe", 400, expected.split_pattern)
    assert not result.stopped and result.name == panel.result_name
    assert [r.rank for r in panel.log_model.records] == list(range(256, 400))
    assert [r.pair for r in panel.log_model.records] == list(expected.merges)
    assert server_ids(qtbot, window, result.name, text) == expected.encode(text).ids
    assert panel.result_name in picker_names(window)
    assert panel.log_model.data(panel.log_model.index(0, 2)) != ""

    panel.use_button.click()
    sample = "Taylor Swift's songs, all of them."
    window.documents.set_text(sample)
    wait_settled(qtbot, window)
    assert window.state.tokenizer == panel.result_name
    assert window.state.result.tokenizer == panel.result_name
    assert window.state.result.encoding.ids == expected.encode(sample).ids
    assert window.tokenizer_box.currentText() == panel.result_name


def test_cancel_keeps_the_first_merges_of_a_full_run(qtbot, window, corpora, monkeypatch):
    # subtle: the compiled merge loop learns tinyshakespeare's merges in about 0.1 s, before a
    # cancel could reach the child; the Python loop (inherited by the spawned child) takes long
    # enough to be stopped half-way. Cancel between merges is the same generator either way.
    monkeypatch.setenv(PURE_PYTHON_VARIABLE, "1")
    corpus = corpora / "en/tinyshakespeare.txt"
    panel = window.training_panel
    panel.set_paths([corpus])
    panel.vocab_spin.setValue(32768)
    panel.train_button.click()
    qtbot.waitUntil(lambda: len(panel.log_model.records) > 0, timeout=TIMEOUT)
    assert panel.cancel_button.isEnabled()
    with qtbot.waitSignal(panel.service.finished, timeout=TIMEOUT):
        panel.cancel_button.click()
    result = panel.result
    kept = [r.pair for r in panel.log_model.records]
    text = corpus.read_text("utf-8")
    full = [s.pair for s in iter_train(text, 32768, pattern="gpt4")]
    assert result.stopped and 0 < len(kept) < len(full)
    assert kept == full[:len(kept)] and result.info.n_vocab == 256 + len(kept)
    # The server's tokenizer has exactly the merges kept: it encodes as one built from them.
    expected = BPETokenizer({pair: 256 + i for i, pair in enumerate(kept)}, NAMED_PATTERNS["gpt4"], {})
    assert server_ids(qtbot, window, result.name, text[:20_000]) == expected.encode(text[:20_000]).ids
    assert "cancelled: kept the first" in panel.message.text()
    assert panel.result_name in picker_names(window)
    # Named by what it holds (once "BPE gpt4 32768 (tinyshakespeare)" with a vocab of a few hundred).
    assert result.name == f"BPE gpt4 {256 + len(kept)} (tinyshakespeare, stopped early)"
    assert "BPE gpt4 32768 (tinyshakespeare)" not in picker_names(window)


@pytest.mark.parametrize("pattern, message", [
    ("(", "invalid split pattern"),
    ("(a)(b)", "capturing groups"),
])
def test_invalid_pattern_is_refused_with_a_message(qtbot, window, small_corpus, pattern, message):
    panel = window.training_panel
    panel.set_paths([small_corpus])
    panel.pattern_box.setCurrentIndex(panel.pattern_box.findData("custom"))
    panel.pattern_edit.setText(pattern)
    panel.train_button.click()
    assert message in panel.message.text()
    assert not panel.service.running and panel.train_button.isEnabled()
    qtbot.waitUntil(lambda: message.split()[-1] in panel.chunks_label.text(), timeout=TIMEOUT)


def test_runaway_pattern_preview_is_stopped_with_a_message(qtbot, window, tmp_path):
    path = tmp_path / "a.txt"
    path.write_text("a" * 1500 + "!", "utf-8")
    panel = window.training_panel
    panel.set_paths([path])
    panel.pattern_box.setCurrentIndex(panel.pattern_box.findData("custom"))
    panel.pattern_edit.setText(r"(?:a+)+b")
    qtbot.waitUntil(lambda: "catastrophic backtracking" in panel.chunks_label.text(), timeout=TIMEOUT)
    panel.train_button.click()  # refused at once: its preview already ran away
    assert "catastrophic backtracking" in panel.message.text() and not panel.service.running


def test_custom_pattern_preview_shows_its_chunks(qtbot, window, tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("hello world, again", "utf-8")
    panel = window.training_panel
    panel.set_paths([path])
    panel.pattern_box.setCurrentIndex(panel.pattern_box.findData("custom"))
    panel.pattern_edit.setText(r"\w+")
    qtbot.waitUntil(lambda: "hello │ world │ again" in panel.chunks_label.text(), timeout=TIMEOUT)


def test_empty_corpus_is_refused_with_a_message(qtbot, window, tmp_path):
    panel = window.training_panel
    panel.train_button.click()  # no files chosen
    assert "the corpus is empty" in panel.message.text() and not panel.service.running
    panel.text_radio.setChecked(True)  # the editor is empty
    panel.train_button.click()
    assert "the corpus is empty" in panel.message.text() and not panel.service.running
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    panel.set_paths([empty])
    panel.train_button.click()
    assert "the corpus is empty" in panel.message.text() and not panel.service.running


def test_files_over_the_training_budget_are_refused_with_the_way_on(qtbot, window, tmp_path, monkeypatch):
    from tokexplorer.core import budgets

    monkeypatch.setitem(budgets.TRAIN_LIMIT_MB, "bpe", 0.001)  # 1,000 bytes
    corpus = tmp_path / "c.txt"
    corpus.write_text("the cat sat on the mat " * 100, "utf-8")
    panel = window.training_panel
    panel.set_paths([corpus])
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("bpe-basic"))  # read whole
    panel.train_button.click()
    assert "over BPE training's budget of 0.001 MB" in panel.message.text()
    # (bytes only: the peak said is that of a corpus trained as one sequence)
    assert budgets.training_over_budget("bpe", corpus.stat().st_size, basic=True) in panel.message.text()
    assert "--max-mb 1" in panel.message.text() and not panel.service.running
    # With a named split pattern the corpus is counted a block at a time: no size refusal.
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("bpe-regex"))
    panel.vocab_spin.setValue(270)
    result = run_training(qtbot, panel)
    assert result.info.n_vocab > 256  # trained: every distinct chunk merged whole (268) before 270


def test_current_text_is_a_corpus(qtbot, window):
    text = "low lower lowest newer newest wider " * 30
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    panel = window.training_panel
    panel.text_radio.setChecked(True)
    assert f"{len(text):,} characters" in panel.corpus_label.text()
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("bpe-basic"))
    panel.vocab_spin.setValue(270)
    result = run_training(qtbot, panel)
    expected = train(text, 270)
    assert [r.pair for r in panel.log_model.records] == list(expected.merges)
    assert result.info.split_pattern is None and result.info.n_vocab == 270
    assert server_ids(qtbot, window, result.name, text) == expected.encode(text).ids


def test_a_run_out_of_pairs_is_named_by_the_vocab_it_holds(qtbot, window):
    """Asked for 1,000 tokens, a text of two words yields a few merges: the picker says how many."""
    text = "hello world " * 20
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    panel = window.training_panel
    panel.text_radio.setChecked(True)
    panel.vocab_spin.setValue(1000)
    result = run_training(qtbot, panel)
    merges = len(train(text, 1000, pattern="gpt4").merges)
    assert 0 < merges < 1000 - 256 and result.info.n_vocab == 256 + merges
    assert result.name == f"BPE gpt4 {256 + merges} (text)" and result.name in picker_names(window)
    assert not result.stopped and "no pair left to merge" in panel.message.text()


def test_sentencepiece_trains_shows_its_phases_and_joins_the_picker(qtbot, window, small_corpus):
    panel = window.training_panel
    panel.set_paths([small_corpus])
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("sp-bpe"))
    assert panel.options_table.isVisibleTo(panel) and not panel.pattern_row.isEnabled()
    panel.vocab_spin.setValue(400)
    panel.set_option("byte_fallback", "false")
    phases = []
    panel.service.phase.connect(lambda what, done, total: phases.append(what))
    result = run_training(qtbot, panel)
    assert any("reading" in p for p in phases) and any("no progress" in p for p in phases)
    assert phases[-1] == "done"
    text = small_corpus.read_text("utf-8")
    expected = train_sentencepiece(text, llama2_options(400, byte_fallback=False))
    assert (result.info.family, result.info.n_vocab) == ("sentencepiece", 400)
    sample = text[:3000] + " 日本語 👋"  # characters the corpus lacks: <unk>, no byte pieces
    assert server_ids(qtbot, window, result.name, sample) == expected.encode(sample).ids
    assert panel.result_name in picker_names(window)


def test_a_sentencepiece_option_of_the_wrong_kind_is_refused(qtbot, window, small_corpus):
    panel = window.training_panel
    panel.set_paths([small_corpus])
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("sp-unigram"))
    panel.set_option("character_coverage", "most")
    panel.train_button.click()
    assert "character_coverage" in panel.message.text() and not panel.service.running


@pytest.mark.parametrize("fmt, pattern, written", [
    ("minbpe", "o200k", "swift-bpe.model"),
    ("tiktoken", "gpt4", "swift-bpe.tiktoken"),  # the readers of these two assume a pattern
    ("gpt2", "gpt2", "swift-bpe/encoder.json"),
])
def test_saved_bpe_loads_back(qtbot, window, small_corpus, tmp_path, fmt, pattern, written):
    panel = window.training_panel
    panel.set_paths([small_corpus])
    panel.pattern_box.setCurrentIndex(panel.pattern_box.findData(pattern))
    panel.special_edit.setText("<|endoftext|>" if fmt == "minbpe" else "")
    panel.vocab_spin.setValue(400)
    run_training(qtbot, panel)
    window.dialogs.paths["save_tokenizer"] = (str(tmp_path / "swift-bpe"), fmt)
    panel.save_button.click()
    qtbot.waitUntil(lambda: panel.message.text().startswith("saved"), timeout=TIMEOUT)
    loaded = load_tokenizer(tmp_path / written)
    sample = small_corpus.read_text("utf-8")[:3000] + "<|endoftext|>"
    assert loaded.encode(sample, allowed_special="all").ids == server_ids(qtbot, window, panel.result_name, sample)
    assert loaded.special_tokens == panel.result.info.special_tokens


def test_saved_sentencepiece_loads_back(qtbot, window, small_corpus, tmp_path):
    panel = window.training_panel
    panel.set_paths([small_corpus])
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("sp-unigram"))
    panel.vocab_spin.setValue(600)  # byte fallback: 256 bytes, the characters, then pieces
    run_training(qtbot, panel)
    window.dialogs.paths["save_tokenizer"] = (str(tmp_path / "sp.model"), "sentencepiece")
    panel.save_button.click()
    qtbot.waitUntil(lambda: panel.message.text().startswith("saved"), timeout=TIMEOUT)
    loaded = load_tokenizer(tmp_path / "sp.model")
    sample = small_corpus.read_text("utf-8")[:3000] + " 日本語 👋"
    assert loaded.encode(sample).ids == server_ids(qtbot, window, panel.result_name, sample)
    assert loaded.n_vocab == panel.result.info.n_vocab == 600 and (tmp_path / "sp.vocab").exists()


def test_files_dropped_on_the_panel_join_the_corpus(qtbot, window, small_corpus, tmp_path):
    other = tmp_path / "other.txt"
    other.write_text("more text", "utf-8")
    panel = window.training_panel
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(small_corpus)), QUrl.fromLocalFile(str(other))])
    event = QDropEvent(QPointF(5, 5), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                       Qt.KeyboardModifier.NoModifier)
    panel.dropEvent(event)
    assert panel.paths == [small_corpus, other] and "2 files" in panel.corpus_label.text()
    window.dialogs.paths["open_corpus"] = [str(other), str(tmp_path / "third.txt")]
    panel.add_files_button.click()
    assert panel.paths == [small_corpus, other, tmp_path / "third.txt"]


def test_the_training_child_imports_no_qt():
    code = ("import sys, tokexplorer.core.training.child, tokexplorer.core.training.bpe;"
            "print(sorted(m for m in sys.modules if m.startswith(('PySide6', 'pyqtgraph'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_training_feeds_the_compression_plot(qtbot, window):
    """The Plots dock's live curve: the corpus's bytes, then its tokens after each merge."""
    curves = []
    window.state.training_curve.connect(curves.append)
    text = "the cat sat on the mat; the cat ate the rat. " * 40
    window.documents.set_text(text)
    wait_settled(qtbot, window)
    panel = window.training_panel
    panel.text_radio.setChecked(True)
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("bpe-basic"))
    panel.vocab_spin.setValue(300)
    run_training(qtbot, panel)
    curve = curves[-1]
    assert curve.n_bytes == len(text.encode())
    assert curve.tokens == [len(text.encode())] + [r.tokens for r in panel.log_model.records]


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie waiting to be reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _trainers() -> list:
    """This process's living trainer children (joining the ones that have ended)."""
    import multiprocessing

    return [p for p in multiprocessing.active_children() if p.name == "tokexplorer-training"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("when", ["merging", "starting"])
def test_closing_the_window_mid_training_ends_the_child(qtbot, window, corpora, when):
    """No orphan: closing the window stops the trainer's process, whether it is merging or still
    being started (the window closes before the child is there to be told)."""
    from PySide6.QtCore import QThreadPool

    panel = window.training_panel
    panel.set_paths([corpora / "en/tinyshakespeare.txt"] * 8)  # 9 MB: many seconds of work
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("bpe-basic"))
    panel.vocab_spin.setValue(32768)
    panel.train_button.click()
    service = panel.service
    if when == "merging":
        qtbot.waitUntil(lambda: len(panel.log_model.records) > 0, timeout=TIMEOUT)
        (trainer,) = _trainers()
        pid = trainer.pid
        assert _alive(pid)
    window.close()  # FakeDialogs answers "Stop Training and Close"
    assert not service.running and [k for k, _ in window.dialogs.asked] == ["ask_stop_training"]
    qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount() == 0, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not _trainers(), timeout=10_000)
    if when == "merging":
        assert not _alive(pid)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_window_leaves_no_trainer_behind(tmp_path):
    """A window killed outright (SIGKILL, a crash) cannot stop its child: the child notices its
    parent is gone and exits by itself, even while it has nothing to say (here it waits forever
    for a corpus)."""
    import os
    import signal
    import time
    from pathlib import Path

    fifo = tmp_path / "corpus.fifo"
    os.mkfifo(fifo)
    script = Path(__file__).with_name("orphan_parent.py")
    parent = subprocess.Popen([sys.executable, str(script), str(fifo)], stdout=subprocess.PIPE, text=True)
    try:
        pid = int(parent.stdout.readline())
        assert _alive(pid)
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    deadline = time.monotonic() + 60  # a bound for a stuck test, not a measure of speed
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(pid)
    if alive:
        os.kill(pid, signal.SIGKILL)
    assert not alive


def start_long_training(qtbot, panel, corpora) -> None:
    """Train on 9 MB (many seconds of work) and wait until merges arrive."""
    panel.set_paths([corpora / "en/tinyshakespeare.txt"] * 8)
    panel.algorithm_box.setCurrentIndex(panel.algorithm_box.findData("bpe-basic"))
    panel.vocab_spin.setValue(32768)
    panel.train_button.click()
    qtbot.waitUntil(lambda: len(panel.log_model.records) > 0, timeout=TIMEOUT)


def stop_questions(window) -> list:
    return [detail for kind, detail in window.dialogs.asked if kind == "ask_stop_training"]


def test_closing_mid_training_asks_first(qtbot, window, corpora):
    """Closing while a training runs asks; Cancel keeps the window and the training going, Stop
    Training and Close ends both."""
    from PySide6.QtCore import QThreadPool

    panel = window.training_panel
    start_long_training(qtbot, panel, corpora)
    window.dialogs.stop_training_answer = False
    window.close()
    assert window.isVisible() and panel.service.running
    [(what, lost)] = stop_questions(window)
    assert panel._training_name in what and "merges learned so far (of 32,512) will be lost" in lost
    learned = len(panel.log_model.records)
    qtbot.waitUntil(lambda: len(panel.log_model.records) > learned, timeout=TIMEOUT)  # still learning
    window.dialogs.stop_training_answer = True
    window.close()
    assert not window.isVisible() and not panel.service.running and len(stop_questions(window)) == 2
    qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount() == 0, timeout=TIMEOUT)
    qtbot.waitUntil(lambda: not _trainers(), timeout=10_000)


def test_closing_without_a_training_running_does_not_ask(qtbot, window, small_corpus):
    panel = window.training_panel
    panel.set_paths([small_corpus])
    panel.vocab_spin.setValue(300)
    run_training(qtbot, panel)  # trained and done: nothing runs any more
    window.close()
    assert not window.isVisible() and stop_questions(window) == []


def real_dialogs(monkeypatch, qtbot, button: str):
    """The window's real question boxes, each answered by clicking `button` (exec is patched):
    the Dialogs, and a list of what each box showed (text, informative text, buttons, default;
    buttons without their "&")."""
    from PySide6.QtWidgets import QMessageBox, QWidget

    from tokexplorer.gui.widgets.dialogs import Dialogs

    shown = []

    def click(box):
        shown.append((box.text(), box.informativeText(), [b.text().replace("&", "") for b in box.buttons()],
                      box.defaultButton().text().replace("&", "")))
        next(b for b in box.buttons() if b.text().replace("&", "") == button).click()
        return 0

    monkeypatch.setattr(QMessageBox, "exec", click)
    parent = QWidget()
    qtbot.addWidget(parent)
    return Dialogs(parent), shown


@pytest.mark.parametrize("button, stops", [("Stop Training and Close", True), ("Cancel", False)])
def test_the_stop_training_question(monkeypatch, qtbot, button, stops):
    """The real question box: its buttons and what each answers (exec answered by a click)."""
    dialogs, shown = real_dialogs(monkeypatch, qtbot, button)
    assert dialogs.ask_stop_training("“BPE 512”", "The 7 merges learned so far will be lost.") is stops
    [(text, lost, buttons, default)] = shown
    assert text == "“BPE 512” is still training. Stop it and close tokexplorer?"
    assert lost == "The 7 merges learned so far will be lost."
    assert sorted(buttons) == ["Cancel", "Stop Training and Close"]
    assert default == "Cancel"


def unsaved_questions(window) -> list:
    return [names for kind, names in window.dialogs.asked if kind == "ask_unsaved_tokenizers"]


def train_two(qtbot, panel, small_corpus) -> list[str]:
    """Train two small tokenizers in the window; their names in the picker."""
    panel.set_paths([small_corpus])
    names = []
    for size in (300, 320):
        panel.vocab_spin.setValue(size)
        run_training(qtbot, panel)
        names.append(panel.result_name)
    return names


def test_closing_with_trained_tokenizers_never_saved_asks_and_saves_each(qtbot, window, small_corpus, tmp_path):
    """Trained tokenizers live in memory only: closing asks (Cancel keeps the window; Save… asks
    where for each in turn, writes it, then closes), and what was written loads back."""
    panel = window.training_panel
    names = train_two(qtbot, panel, small_corpus)
    sample = small_corpus.read_text("utf-8")[:2000]
    trained = {name: server_ids(qtbot, window, name, sample) for name in names}
    window.dialogs.unsaved_tokenizers_answer = "cancel"
    window.close()
    assert window.isVisible() and unsaved_questions(window) == [names]
    asked_where = []

    def where(suggested, formats):
        asked_where.append(suggested)
        return str(tmp_path / f"tok{len(asked_where)}"), "minbpe"

    window.dialogs.save_tokenizer_path = where
    window.dialogs.unsaved_tokenizers_answer = "save"
    window.close()
    assert not window.isVisible() and len(unsaved_questions(window)) == 2 and len(asked_where) == 2
    for i, name in enumerate(names, start=1):
        loaded = load_tokenizer(tmp_path / f"tok{i}.model")
        assert loaded.encode(sample).ids == trained[name]


def test_a_cancelled_save_keeps_the_window_and_discard_closes(qtbot, window, small_corpus):
    panel = window.training_panel
    names = train_two(qtbot, panel, small_corpus)
    window.dialogs.unsaved_tokenizers_answer = "save"
    window.dialogs.paths["save_tokenizer"] = None  # the save dialog is cancelled
    window.close()
    assert window.isVisible() and panel.unsaved.keys() == set(names)
    window.dialogs.unsaved_tokenizers_answer = "discard"
    window.close()
    assert not window.isVisible() and unsaved_questions(window) == [names, names]


def test_a_tokenizer_saved_from_the_panel_is_not_asked_about(qtbot, window, small_corpus, tmp_path):
    panel = window.training_panel
    first, second = train_two(qtbot, panel, small_corpus)
    window.dialogs.paths["save_tokenizer"] = (str(tmp_path / "second"), "minbpe")
    panel.save_button.click()  # saves the last one trained
    qtbot.waitUntil(lambda: panel.message.text().startswith("saved"), timeout=TIMEOUT)
    window.dialogs.unsaved_tokenizers_answer = "cancel"
    window.close()
    assert unsaved_questions(window) == [[first]]
    window.dialogs.unsaved_tokenizers_answer = "discard"
    window.close()
    assert not window.isVisible()


@pytest.mark.parametrize("button, answer", [("Save…", "save"), ("Discard", "discard"), ("Cancel", "cancel")])
def test_the_unsaved_tokenizers_question(monkeypatch, qtbot, button, answer):
    """The real question box: its text, buttons, default (Save…) and what each answers."""
    dialogs, shown = real_dialogs(monkeypatch, qtbot, button)
    assert dialogs.ask_unsaved_tokenizers(["BPE gpt4 300 (swift)", "BPE gpt4 320 (swift)"]) == answer
    assert dialogs.ask_unsaved_tokenizers(["SP bpe 600 (text)"]) == answer
    (many, _, buttons, default), (one, _, _, _) = shown
    assert many == "2 trained tokenizers are not saved: “BPE gpt4 300 (swift)”, “BPE gpt4 320 (swift)”."
    assert one == "The trained tokenizer “SP bpe 600 (text)” is not saved."
    assert sorted(buttons) == ["Cancel", "Discard", "Save…"] and default == "Save…"


@pytest.mark.parametrize("button, stops", [("Stop the Sweep and Close", True), ("Cancel", False)])
def test_the_stop_sweep_question(monkeypatch, qtbot, button, stops):
    dialogs, shown = real_dialogs(monkeypatch, qtbot, button)
    assert dialogs.ask_stop_sweep("Nothing of it is kept.") is stops
    assert [(text, default) for text, _, _, default in shown] == [
        ("The vocab-size sweep is still running. Stop the sweep and close tokexplorer?", "Cancel")]



def wheel(widget, steps: int = -3) -> None:
    """Turn the mouse wheel over the middle of `widget` (negative: towards the user, scrolling down)."""
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 120 * steps),
                        Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def test_the_wheel_scrolls_the_panel_and_changes_no_value_in_passing(qtbot, window):
    """Wheel over the split pattern and the vocab size: once they became "Custom…" and 4,091."""
    window.show_view("training")
    panel = window.training_panel
    window.training_dock.resize(500, 300)  # short: the settings scroll
    qtbot.waitUntil(lambda: panel.settings_scroll.verticalScrollBar().maximum() > 0)
    bar = panel.settings_scroll.verticalScrollBar()
    for widget in (panel.pattern_box, panel.vocab_spin, panel.algorithm_box):
        assert widget.focusPolicy() == Qt.FocusPolicy.StrongFocus
        before = widget.currentIndex() if hasattr(widget, "currentIndex") else widget.value()
        bar.setValue(0)
        wheel(widget, -3)
        wheel(widget, -3)
        after = widget.currentIndex() if hasattr(widget, "currentIndex") else widget.value()
        assert after == before, widget.objectName()
        assert bar.value() > 0  # the wheel went to the scroll area
    assert panel.pattern_box.currentData() == "gpt4" and panel.vocab_spin.value() == 4096
    # Clicked into (focused), the spin box takes the wheel as usual.
    window.activateWindow()
    panel.vocab_spin.setFocus()
    qtbot.waitUntil(panel.vocab_spin.hasFocus)
    wheel(panel.vocab_spin, 1)
    assert panel.vocab_spin.value() == 4097


def test_the_buttons_stay_put_and_in_view(qtbot, window, small_corpus):
    """Train and Save sit below the scroll area, and the split's chunk preview arriving moves nothing."""
    window.show_view("training")
    panel = window.training_panel
    for b in (panel.train_button, panel.save_button, panel.cancel_button, panel.use_button):
        assert not panel.settings_scroll.isAncestorOf(b) and b.isVisible()
    panel.set_paths([small_corpus])
    panel.algorithm_box.setCurrentIndex(0)  # bytes only: no preview
    qtbot.wait(50)
    train_y, chunks_y = panel.train_button.mapTo(panel, QPoint(0, 0)).y(), panel.vocab_spin.mapTo(panel, QPoint(0, 0)).y()
    panel.algorithm_box.setCurrentIndex(1)  # a regex split: its preview appears
    qtbot.waitUntil(lambda: "chunks in the preview" in panel.chunks_label.text(), timeout=10_000)
    qtbot.wait(50)
    assert panel.chunks_label.isVisible()
    assert panel.train_button.mapTo(panel, QPoint(0, 0)).y() == train_y
    assert panel.vocab_spin.mapTo(panel, QPoint(0, 0)).y() == chunks_y  # nor what is below it in the form


@pytest.mark.parametrize("width, scale", [(180, 1.0), (350, 1.5), (350, 2.0)])
def test_the_form_fits_a_narrow_dock_with_a_large_font(qtbot, window, width, scale):
    """In a 180 px dock (as a 1366 px screen at 200 % gives it) and a 350 px one at 1.5 and 2
    times the font, the form needs no horizontal scroll bar, the progress bar says what it is,
    and every button shows its whole label."""
    from .narrow import narrow_dock, shows_whole_text

    narrow_dock(qtbot, window, "training", width=width, scale=scale)
    panel = window.training_panel
    for algorithm in range(panel.algorithm_box.count()):  # the SentencePiece options table too
        panel.algorithm_box.setCurrentIndex(algorithm)
        qtbot.wait(20)
        assert not panel.settings_scroll.horizontalScrollBar().isVisible(), panel.algorithm_box.currentText()
    assert not panel.log_view.horizontalScrollBar().isVisible()
    assert panel.progress.text() == "no training run yet"
    for b in (panel.train_button, panel.cancel_button, panel.save_button, panel.use_button,
              panel.add_files_button, panel.clear_files_button, panel.files_radio, panel.text_radio):
        assert shows_whole_text(b), (b.text(), b.width(), b.sizeHint().width())
