"""Saves and unsaved text that stay the user's (issue 32, items 3-5): the settings folder, the
recovery folder and their files are private whatever the umask; a link planted in the recovery
folder is refused; a restored text's recorded path is shown in full and not written without asking
unless the user chose that file here; a save never clobbers a file changed on disk, a read-only
file, its owner and mode, or a hard link."""

from __future__ import annotations

import os

import pytest

from tokexplorer.core.files import recovery
from tokexplorer.core.files.recovery import Recovered, Session
from tokexplorer.gui import settings as keys
from tokexplorer.gui.services.autosave import ENV_DEBOUNCE

from .helpers import FakeDialogs, type_text, wait_settled

ORIGINAL = "first line\nsecond line\n"


@pytest.fixture(autouse=True)
def fast_autosave(monkeypatch):
    monkeypatch.setenv(ENV_DEBOUNCE, "50")


def mode(path) -> int:
    return os.lstat(path).st_mode & 0o777


def recovery_files(settings_folder):
    folder = settings_folder / "recovery"
    return sorted(folder.glob("*.recovery")) if folder.is_dir() else []


def opened(make_window, qtbot, path, dialogs=None):
    """A window that opened `path` and typed "typed " at its start."""
    window = make_window(dialogs=dialogs or FakeDialogs())
    window.documents.open_text(path, asked=True)
    qtbot.waitUntil(lambda: window.state.path == path and not window.editor.isReadOnly())
    wait_settled(qtbot, window)
    type_text(window.editor, "typed ")
    qtbot.waitUntil(lambda: window.state.modified)
    return window


def orphan_recovery(settings_folder, rec: Recovered) -> Session:
    """A recovery file left by an instance that is gone, as a crash leaves it."""
    crashed = Session.claim(settings_folder / "recovery")
    crashed.write(rec)
    crashed.release(remove=False)
    return crashed


# --- item 3: private, whatever the umask ----------------------------------------------------------


def test_settings_recovery_folder_and_files_are_private(make_window, qtbot, tmp_path, isolated_settings,
                                                        umask_022):
    os.chmod(isolated_settings, 0o755)  # as a folder made with the usual umask is
    path = tmp_path / "private.txt"
    path.write_text(ORIGINAL)
    os.chmod(path, 0o600)
    window = opened(make_window, qtbot, path)
    qtbot.waitUntil(lambda: len(recovery_files(isolated_settings)) == 1)
    window.settings.sync()  # the recent files are written
    ini = isolated_settings / "tokexplorer.ini"
    assert str(path) in ini.read_text()
    assert (mode(isolated_settings), mode(isolated_settings / "recovery")) == (0o700, 0o700)
    assert (mode(recovery_files(isolated_settings)[0]), mode(ini)) == (0o600, 0o600)
    wait_settled(qtbot, window)


def test_an_open_settings_file_is_made_private(isolated_settings, umask_022):
    ini = isolated_settings / "tokexplorer.ini"
    ini.write_text("[files]\nrecent=/a/b.txt\n")
    os.chmod(ini, 0o644)
    settings = keys.open_settings()
    settings.setValue(keys.RECENT_FILES, ["/c/d.txt"])
    settings.sync()
    assert mode(ini) == 0o600 and "/c/d.txt" in ini.read_text()


# --- item 4: planted links and recorded paths ------------------------------------------------------


def test_a_planted_recovery_link_is_refused_and_never_written_through(make_window, qtbot, tmp_path,
                                                                      isolated_settings):
    victim = tmp_path / "victim.txt"
    victim_bytes = recovery.dump(Recovered("someone else's file", path=str(victim)))
    victim.write_bytes(victim_bytes)
    crashed = orphan_recovery(isolated_settings, Recovered("x"))
    crashed.recovery_path.unlink()
    os.symlink(victim, crashed.recovery_path)
    dialogs = FakeDialogs()
    window = make_window(dialogs=dialogs)
    assert window.autosave.recover() is False
    assert dialogs.asked == []
    assert "symbolic link" in window.banner.label.text()
    type_text(window.editor, "new unsaved text")  # autosaved: into this window's own file only
    qtbot.waitUntil(lambda: len(recovery_files(isolated_settings)) == 2)
    window.autosave.flush()
    assert victim.read_bytes() == victim_bytes and crashed.recovery_path.is_symlink()
    wait_settled(qtbot, window)


def test_a_restored_path_is_shown_in_full_and_save_asks_where(make_window, qtbot, tmp_path, isolated_settings):
    system = tmp_path / "etc" / "config.conf"  # a file the user never opened here
    system.parent.mkdir()
    system.write_text("original\n")
    orphan_recovery(isolated_settings, Recovered("planted text\n", path=str(system), saved_at=1.0))
    dialogs = FakeDialogs()
    window = make_window(dialogs=dialogs)
    assert window.autosave.recover() is True
    assert dialogs.asked[0][0] == "ask_restore" and dialogs.asked[0][1][0] == str(system)
    wait_settled(qtbot, window)
    assert window.state.path == system and window.state.modified
    dialogs.paths["save"] = None  # the user cancels the Save As dialog
    assert window.documents.save() is False
    assert dialogs.asked[-1] == ("save_path", str(system))  # asked where, the path suggested
    assert system.read_text() == "original\n"
    mine = tmp_path / "mine.txt"
    dialogs.paths["save"] = str(mine)
    assert window.documents.save() is True
    assert mine.read_text() == "planted text\n" and system.read_text() == "original\n"
    assert window.documents.save() is True  # a file saved here is written without asking again
    assert [q for q, _ in dialogs.asked].count("save_path") == 2
    wait_settled(qtbot, window)


# --- item 5: saves that never clobber --------------------------------------------------------------


@pytest.mark.parametrize("answer", ["cancel", "overwrite", "save_as", "reload"])
def test_the_later_of_two_windows_is_asked_before_it_overwrites(make_window, qtbot, tmp_path, answer):
    path = tmp_path / "shared.txt"
    path.write_text(ORIGINAL)
    first = opened(make_window, qtbot, path)
    dialogs = FakeDialogs()
    second = opened(make_window, qtbot, path, dialogs)
    type_text(first.editor, "first wins ")
    assert first.documents.save() is True
    theirs = path.read_text()
    assert theirs == "typed first wins " + ORIGINAL
    dialogs.changed_answer = answer
    other = tmp_path / "other.txt"
    dialogs.paths["save"] = str(other)
    saved = second.documents.save()
    assert ("ask_changed_on_disk", str(path)) in dialogs.asked
    if answer == "overwrite":
        assert saved and path.read_text() == "typed " + ORIGINAL
        assert second.documents.save() is True  # saved here since: no question again
        assert [q for q, _ in dialogs.asked].count("ask_changed_on_disk") == 1
    else:
        assert path.read_text() == theirs  # the first window's save is not lost
    if answer == "save_as":
        assert saved and other.read_text() == "typed " + ORIGINAL and second.state.path == other
    if answer == "reload":
        qtbot.waitUntil(lambda: not second.state.modified and second.editor.toPlainText() == theirs)
    wait_settled(qtbot, first)
    wait_settled(qtbot, second)


def test_a_read_only_file_is_refused_and_save_as_offered(make_window, qtbot, tmp_path):
    path = tmp_path / "locked.txt"
    path.write_text(ORIGINAL)
    os.chmod(path, 0o444)
    dialogs = FakeDialogs()
    window = opened(make_window, qtbot, path, dialogs)
    assert window.documents.save() is False  # answered Cancel
    assert ("ask_read_only", str(path)) in dialogs.asked
    assert path.read_text() == ORIGINAL and mode(path) == 0o444 and window.state.modified
    dialogs.read_only_answer = "save_as"
    copy = tmp_path / "copy.txt"
    dialogs.paths["save"] = str(copy)
    assert window.documents.save() is True
    assert copy.read_text() == "typed " + ORIGINAL and path.read_text() == ORIGINAL
    wait_settled(qtbot, window)


def test_a_hard_link_survives_a_save(make_window, qtbot, tmp_path):
    path = tmp_path / "linked.txt"
    path.write_text(ORIGINAL)
    other_name = tmp_path / "other-name.txt"
    os.link(path, other_name)
    inode = path.stat().st_ino
    window = opened(make_window, qtbot, path)
    assert window.documents.save() is True
    assert other_name.read_text() == path.read_text() == "typed " + ORIGINAL
    assert path.stat().st_ino == inode and path.stat().st_nlink == 2
    wait_settled(qtbot, window)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_owner_group_and_mode_are_kept(make_window, qtbot, tmp_path):
    path = tmp_path / "theirs.txt"
    path.write_text(ORIGINAL)
    os.chown(path, 4321, 4322)
    os.chmod(path, 0o640)
    window = opened(make_window, qtbot, path)
    assert window.documents.save() is True
    st = path.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (4321, 4322, 0o640)
    assert path.read_text() == "typed " + ORIGINAL
    wait_settled(qtbot, window)


# --- a restored text's file changed on disk while tokexplorer was down ------------------------------


def crashed_with_unsaved_edits(make_window, qtbot, settings_folder, path):
    """A window opened `path` (it is in Open Recent now), got "typed " and autosaved it; then it
    went as a crash leaves things: its recovery file (the very bytes it wrote) without an owner."""
    window = opened(make_window, qtbot, path)
    qtbot.waitUntil(lambda: len(recovery_files(settings_folder)) == 1)
    window.autosave.flush()
    data = recovery_files(settings_folder)[0].read_bytes()
    wait_settled(qtbot, window)
    window.close()  # its own file goes; what a crash leaves is made below from the same bytes
    assert not recovery_files(settings_folder)
    crashed = Session.claim(settings_folder / "recovery")
    recovery.write_private(crashed.recovery_path, data)
    crashed.release(remove=False)
    return recovery.load(data)


@pytest.mark.parametrize("answer", ["cancel", "overwrite"])
def test_save_after_a_restore_asks_when_the_file_changed_while_we_were_down(make_window, qtbot, tmp_path,
                                                                              isolated_settings, answer):
    path = tmp_path / "notes.txt"
    path.write_text(ORIGINAL)
    st = os.stat(path)
    rec = crashed_with_unsaved_edits(make_window, qtbot, isolated_settings, path)
    assert rec.text == "typed " + ORIGINAL
    assert rec.disk == (st.st_mtime_ns, st.st_size, st.st_ino, st.st_dev)  # the file as it was read
    theirs = "another editor's version\n"  # saved over the file while tokexplorer was down
    path.write_text(theirs)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    dialogs = FakeDialogs()
    dialogs.changed_answer = answer
    window = make_window(dialogs=dialogs)
    assert window.autosave.recover() is True
    wait_settled(qtbot, window)
    assert window.state.path == path and window.state.modified
    assert window.documents.chosen(path)  # in Open Recent: Save writes there without Save As
    saved = window.documents.save()
    assert ("ask_changed_on_disk", str(path)) in dialogs.asked
    assert "save_path" not in [q for q, _ in dialogs.asked]
    if answer == "overwrite":
        assert saved and path.read_text() == "typed " + ORIGINAL
        assert window.documents.save() is True  # saved here since: no question again
        assert [q for q, _ in dialogs.asked].count("ask_changed_on_disk") == 1
    else:
        assert not saved and path.read_text() == theirs and window.state.modified
    wait_settled(qtbot, window)


def test_save_after_a_restore_writes_without_asking_when_the_file_is_as_it_was(make_window, qtbot, tmp_path,
                                                                                isolated_settings):
    path = tmp_path / "notes.txt"
    path.write_text(ORIGINAL)
    crashed_with_unsaved_edits(make_window, qtbot, isolated_settings, path)
    dialogs = FakeDialogs()
    window = make_window(dialogs=dialogs)
    assert window.autosave.recover() is True
    wait_settled(qtbot, window)
    window.autosave.flush()  # the restored text's own recovery file keeps the record
    assert recovery.load(recovery_files(isolated_settings)[0].read_bytes()).disk is not None
    assert window.documents.save() is True
    assert path.read_text() == "typed " + ORIGINAL
    assert [q for q, _ in dialogs.asked] == ["ask_restore"]
    wait_settled(qtbot, window)


def test_the_record_follows_the_last_save(make_window, qtbot, tmp_path, isolated_settings):
    """Saved, then edited again: the recovery file records the file as this save left it (a
    restore then writes over its own save without asking, and asks after anyone else's)."""
    path = tmp_path / "notes.txt"
    path.write_text(ORIGINAL)
    read = os.stat(path)
    window = opened(make_window, qtbot, path)
    assert window.documents.save() is True
    saved = os.stat(path)  # "typed " longer than at the read
    type_text(window.editor, "more ")
    qtbot.waitUntil(lambda: window.state.modified)
    qtbot.waitUntil(lambda: bool(recovery_files(isolated_settings))
                    and "more" in recovery.load(recovery_files(isolated_settings)[0].read_bytes()).text)
    rec = recovery.load(recovery_files(isolated_settings)[0].read_bytes())
    assert rec.disk == (saved.st_mtime_ns, saved.st_size, saved.st_ino, saved.st_dev) != (
        read.st_mtime_ns, read.st_size, read.st_ino, read.st_dev)
    wait_settled(qtbot, window)


def test_save_after_restoring_a_file_with_no_record_asks(make_window, qtbot, tmp_path, isolated_settings):
    """A recovery file from before the record (or a damaged one): nothing tells what the file was,
    so Save asks rather than writing over what may be another editor's change."""
    path = tmp_path / "notes.txt"
    path.write_text(ORIGINAL)
    first = make_window()
    first.documents.remember(path)  # in Open Recent
    wait_settled(qtbot, first)
    first.close()
    orphan_recovery(isolated_settings, Recovered("old text\n", path=str(path), saved_at=1.0))
    dialogs = FakeDialogs()
    window = make_window(dialogs=dialogs)
    assert window.autosave.recover() is True
    wait_settled(qtbot, window)
    assert window.documents.chosen(path)
    assert window.documents.save() is False  # answered Cancel
    assert ("ask_changed_on_disk", str(path)) in dialogs.asked and path.read_text() == ORIGINAL
    wait_settled(qtbot, window)
