"""Autosave (gui/autosave.py) in the window: unsaved text is written to a recovery file, a clean
close or a save removes it, and a later start offers it back exactly (CRLF and astral characters
included) with its path, tokenizer and policy. A crash is stood for by letting go of the first
window's lock without removing its files, as the kernel does when a process dies; the real kill
is tests/gui/test_autosave_crash.py."""

from __future__ import annotations

import base64

import pytest

from tokexplorer.core.files import recovery
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.files.textfile import read_text_file
from tokexplorer.gui.services.autosave import ENV_DEBOUNCE

from .helpers import FakeDialogs, type_text, wait_settled

ORIGINAL = "first line 👋🏽\r\nsecond 𝕏 𠀀 line\r\n"
TYPED = "typed é 🇺🇳\nmore"
EXPECTED = ORIGINAL + TYPED.replace("\n", "\r\n")


@pytest.fixture(autouse=True)
def fast_autosave(monkeypatch):
    monkeypatch.setenv(ENV_DEBOUNCE, "50")


def recovery_files(folder):
    return sorted((folder / "recovery").glob("*.recovery")) if (folder / "recovery").is_dir() else []


def latest(folder) -> recovery.Recovered:
    """What the one recovery file holds (an AssertionError, which waitUntil retries, until it is there)."""
    files = recovery_files(folder)
    assert len(files) == 1
    return recovery.load(files[0].read_bytes())


def edited_window(make_window, qtbot, tmp_path, isolated_settings):
    """A window that opened a CRLF file, typed at its end, and autosaved."""
    path = tmp_path / "notes.txt"
    path.write_bytes(ORIGINAL.encode("utf-8"))
    window = make_window()
    window.documents.open_text(path, asked=True)
    qtbot.waitUntil(lambda: window.state.path == path and not window.editor.isReadOnly())
    wait_settled(qtbot, window)
    window.editor.moveCursor(window.editor.textCursor().MoveOperation.End)
    type_text(window.editor, TYPED)
    qtbot.waitUntil(lambda: len(recovery_files(isolated_settings)) == 1
                    and latest(isolated_settings).text == EXPECTED)
    return window, path


def crash(qtbot, window):
    """What the kernel does to a killed process: its lock goes, its files stay. (The window
    settles first: a panel's job finishing after the test would report into a deleted window.)"""
    wait_settled(qtbot, window)
    window.autosave.session.release(remove=False)
    window.autosave.session = None


def test_unsaved_text_is_written_with_its_context(make_window, qtbot, tmp_path, isolated_settings):
    window, path = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    rec = latest(isolated_settings)
    assert window.editor.user_text() == EXPECTED
    assert (rec.path, rec.newline, rec.tokenizer) == (str(path), "\r\n", window.state.tokenizer)
    window.state.set_tokenizer("gpt2")  # a change of tokenizer is kept too
    # (30 s: the server loads the tokenizer first, slow when xdist runs a worker per core)
    qtbot.waitUntil(lambda: latest(isolated_settings).tokenizer == "gpt2", timeout=30_000)
    wait_settled(qtbot, window)


def test_a_second_running_window_does_not_take_the_first_ones_text(make_window, qtbot, tmp_path,
                                                                   isolated_settings):
    edited_window(make_window, qtbot, tmp_path, isolated_settings)
    dialogs = FakeDialogs()
    second = make_window(dialogs=dialogs)
    assert second.autosave.recover() is False
    assert dialogs.asked == [] and len(recovery_files(isolated_settings)) == 1


def test_after_a_crash_the_text_is_restored_as_unsaved(make_window, qtbot, tmp_path, isolated_settings):
    first, path = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    first.state.set_document_policy("all")
    qtbot.waitUntil(lambda: latest(isolated_settings).document_policy == "all")
    first.state.set_tokenizer("o200k_base")  # loaded by the server first: 30 s under -n auto
    qtbot.waitUntil(lambda: latest(isolated_settings).tokenizer == "o200k_base", timeout=30_000)
    crash(qtbot, first)
    dialogs = FakeDialogs()
    second = make_window(dialogs=dialogs)
    assert second.autosave.recover() is True
    ((question, (name, when, chars)),) = dialogs.asked
    assert (question, name, chars) == ("ask_restore", str(path), len(EXPECTED))  # the path in full
    assert when.endswith("seconds ago")
    wait_settled(qtbot, second)
    state = second.state
    assert second.editor.user_text() == EXPECTED
    assert (state.path, state.newline, state.modified, state.tokenizer, state.effective_policy) == (
        path, "\r\n", True, "o200k_base", "all")
    assert second.isWindowModified()
    # tokenized as restored: the core's own encoding of the exact text
    assert (state.result.tokenizer, state.result.policy) == ("o200k_base", "all")
    assert state.result.encoding.ids == get_builtin("o200k_base").encode(EXPECTED, allowed_special="all").ids
    # The text stays protected: the file is now the second window's own...
    qtbot.waitUntil(lambda: [p.name for p in recovery_files(isolated_settings)]
                    == [second.autosave.session.recovery_path.name])
    # ...until it is saved, which writes the file exactly and removes the recovery file.
    assert second.documents.save()
    second.autosave.flush()
    assert read_text_file(path) == EXPECTED and recovery_files(isolated_settings) == []
    type_text(second.editor, "x")  # an unsaved text again after the save is kept again
    qtbot.waitUntil(lambda: len(recovery_files(isolated_settings)) == 1)


@pytest.mark.parametrize("answer", ["discard", "later"])
def test_discard_deletes_and_later_keeps(make_window, qtbot, tmp_path, isolated_settings, answer):
    first, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    crash(qtbot, first)
    dialogs = FakeDialogs()
    dialogs.restore_answer = answer
    second = make_window(dialogs=dialogs)
    before = second.editor.user_text()
    assert second.autosave.recover() is False
    assert second.editor.user_text() == before and not second.state.modified
    left = sorted(p.suffix for p in (isolated_settings / "recovery").iterdir())
    assert left == ([] if answer == "discard" else [".lock", ".recovery"])


def test_a_clean_close_and_undo_to_saved_leave_no_file(make_window, qtbot, tmp_path, isolated_settings):
    window, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    window.editor.document().setModified(False)  # as undoing back to the saved text does
    qtbot.waitUntil(lambda: recovery_files(isolated_settings) == [])
    type_text(window.editor, "y")
    qtbot.waitUntil(lambda: len(recovery_files(isolated_settings)) == 1)
    window.dialogs.unsaved_answer = "discard"
    window.close()
    assert list((isolated_settings / "recovery").iterdir()) == []
    window.editor.document().setModified(True)  # what happens after the close is not kept (nor an error)
    window.autosave.save_now()
    assert list((isolated_settings / "recovery").iterdir()) == []


def test_an_unreadable_recovery_file_is_kept_and_reported(make_window, isolated_settings):
    folder = isolated_settings / "recovery"
    folder.mkdir()
    bad = folder / "999-dead.recovery"
    bad.write_bytes(recovery.dump(recovery.Recovered("lost text?"))[:-4])
    dialogs = FakeDialogs()
    window = make_window(dialogs=dialogs)
    assert window.autosave.recover() is False
    assert dialogs.asked == [] and bad.exists()
    assert window.banner.kind == "note" and "could not be read" in window.banner.label.text()
    assert "cut short" in window.banner.label.text()


def crash_with_tokenizer_file(make_window, qtbot, tmp_path, isolated_settings, tok_file) -> None:
    """Write a .tiktoken with the 256 bytes and one merge ("ab"), as a trained tokenizer would be
    written, colour an edited text with it, type " ab", wait for the autosave, then crash."""
    ranks = [bytes([b]) for b in range(256)] + [b"ab"]
    tok_file.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(ranks)))
    first, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    first.documents.open_tokenizer(tok_file)
    qtbot.waitUntil(lambda: first.state.tokenizer == tok_file.name)
    type_text(first.editor, " ab")
    qtbot.waitUntil(lambda: latest(isolated_settings).text == EXPECTED + " ab"
                    and tok_file.name in (latest(isolated_settings).tokenizer, latest(isolated_settings).tokenizer_file))
    crash(qtbot, first)


def test_a_tokenizer_in_a_temporary_folder_comes_back_with_the_text(make_window, qtbot, tmp_path,
                                                                    isolated_settings):
    tok_file = tmp_path / "trained.tiktoken"
    crash_with_tokenizer_file(make_window, qtbot, tmp_path, isolated_settings, tok_file)
    assert latest(isolated_settings).tokenizer_file == "trained.tiktoken"  # kept beside the text
    tok_file.unlink()  # temporary files are gone after a reboot
    second = make_window()
    assert second.autosave.recover()
    wait_settled(qtbot, second)
    assert second.state.tokenizer.startswith("trained.tiktoken")
    assert second.state.result.encoding.ids[-1] == 256  # " ab" ends with the merged token
    assert second.editor.user_text() == EXPECTED + " ab"


def test_without_a_tokenization_the_text_is_read_from_the_editor(make_window, qtbot, tmp_path, isolated_settings):
    window, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    window.state.result = None  # as after a tokenizer that failed: no worker's copy to take
    type_text(window.editor, "z")
    wait_settled(qtbot, window)
    window.state.result = None
    window.autosave.save_now()
    window.autosave.flush()
    assert latest(isolated_settings).text == EXPECTED + "z"


def add_in_memory(qtbot, state, tok) -> str:
    """Offer a BPE held only in the tokenizing server's memory, as the training workbench does with
    what it trained; its name in the picker, once the server has built it."""
    from tokexplorer.server.protocol import TrainedBpe

    built = []
    name = state.add_trained(tok.name, TrainedBpe(dict(tok.merges), tok.split_pattern, dict(tok.special_tokens),
                                                  "trained here"), built.append)
    qtbot.waitUntil(lambda: bool(built), timeout=30_000)
    return name


def test_a_tokenizer_trained_in_memory_comes_back_with_the_text(make_window, qtbot, tmp_path, isolated_settings):
    from tokexplorer.core.training.bpe import train

    tok = train(EXPECTED * 20, 300, pattern="gpt4", special_tokens=["<|end|>"], name="my bpe")
    first, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    first.state.set_tokenizer(add_in_memory(qtbot, first.state, tok))
    wait_settled(qtbot, first)
    type_text(first.editor, "!")
    qtbot.waitUntil(lambda: (latest(isolated_settings).text, latest(isolated_settings).tokenizer_file)
                    == (EXPECTED + "!", "my_bpe.model"))
    crash(qtbot, first)
    second = make_window()
    assert second.autosave.recover()
    # The restored document is new to the state: that must not remove the tokenizer just moved in
    # (it did, at times before the worker opened it, and the window fell back to cl100k_base).
    second.autosave.flush()
    assert (second.autosave.session.folder / f"{second.autosave.session.id}.tokenizers" / "my_bpe.model").is_file()
    wait_settled(qtbot, second)
    assert second.state.tokenizer == "my_bpe.model"
    # What was kept is the tokenizer itself (read here, in the test's process), and the restored
    # window's server tokenizes with it.
    from tokexplorer.core.registry import load_tokenizer

    folder = second.autosave.session.folder / f"{second.autosave.session.id}.tokenizers"
    back = load_tokenizer(folder / "my_bpe.model")
    assert (back.merges, back.special_tokens, back.split_pattern) == (tok.merges, tok.special_tokens,
                                                                      tok.split_pattern)
    assert second.state.catalog.info("my_bpe.model").n_vocab == tok.n_vocab
    assert second.state.result.encoding.ids == tok.encode(EXPECTED + "!").ids


def test_a_users_tokenizer_file_is_opened_again(make_window, qtbot, tmp_path, isolated_settings, monkeypatch):
    import tokexplorer.gui.services.autosave as autosave

    monkeypatch.setattr(autosave, "in_temp_folder", lambda path: False)  # as a file in the user's folders
    tok_file = tmp_path / "mine.tiktoken"
    crash_with_tokenizer_file(make_window, qtbot, tmp_path, isolated_settings, tok_file)
    assert latest(isolated_settings).tokenizer == "mine.tiktoken"
    second = make_window()
    assert second.autosave.recover()
    wait_settled(qtbot, second)
    assert second.state.catalog.path_of(second.state.tokenizer) == tok_file
    assert list((isolated_settings / "recovery").glob("*.tokenizers/*")) == []  # not copied: it is the user's


def test_typing_that_never_pauses_is_still_saved(make_window, qtbot, tmp_path, isolated_settings, monkeypatch):
    import tokexplorer.gui.services.autosave as autosave

    monkeypatch.setenv(ENV_DEBOUNCE, str(24 * 3600 * 1000))  # a pause that never comes
    monkeypatch.setattr(autosave, "MAX_WAIT_MS", 0)
    window, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)  # saved all the same
    type_text(window.editor, "w")
    qtbot.waitUntil(lambda: latest(isolated_settings).text == EXPECTED + "w")


def test_a_recovery_folder_that_cannot_be_written_is_said_once(make_window, qtbot, isolated_settings):
    (isolated_settings / "recovery").write_text("a file where the folder should be")
    window = make_window()
    assert window.autosave.recover() is False
    type_text(window.editor, "unsaved")
    qtbot.waitUntil(lambda: window.banner.kind == "note")
    assert "Autosave is not working" in window.banner.label.text()
    window.banner.clear()
    type_text(window.editor, " more")
    wait_settled(qtbot, window)
    window.autosave.save_now()
    assert window.banner.kind == ""  # said once, not at every keystroke


def test_a_file_opened_at_start_asks_about_the_restored_text_first(make_window, qtbot, tmp_path,
                                                                   isolated_settings):
    first, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    crash(qtbot, first)
    other = tmp_path / "other.txt"
    other.write_text("another file", encoding="utf-8")
    dialogs = FakeDialogs()
    dialogs.unsaved_answer = "cancel"
    second = make_window(dialogs=dialogs)
    assert second.autosave.recover()
    # as run_gui does with `tokexplorer other.txt`
    second.autosave.after_restore(lambda: second.documents.open_text(other))
    wait_settled(qtbot, second)
    assert [q for q, _ in dialogs.asked] == ["ask_restore", "ask_unsaved"]
    assert second.editor.user_text() == EXPECTED and second.state.modified


def test_closing_while_a_restored_text_loads_keeps_it_for_the_next_start(make_window, qtbot, tmp_path,
                                                                          isolated_settings):
    first, _ = edited_window(make_window, qtbot, tmp_path, isolated_settings)
    big = "many words on many lines\n" * 10_000  # 250k characters: the load takes several turns
    first.editor.textCursor().insertText(big)
    qtbot.waitUntil(lambda: latest(isolated_settings).text.endswith(big.replace("\n", "\r\n")))
    crash(qtbot, first)
    second = make_window()
    assert second.autosave.recover()
    assert second.editor.loading
    assert second.close()
    third = make_window()
    assert third.autosave.recover()
    qtbot.waitUntil(lambda: not third.editor.loading)
    assert third.editor.user_text() == EXPECTED + big.replace("\n", "\r\n")
