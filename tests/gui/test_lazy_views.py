"""The views no first workspace shows are made when first shown: the window appears without
importing pyqtgraph or the lessons, and a view made late shows the state as it is then."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.gui.helpers import wait_settled

# Run in a fresh interpreter: this test process has imported everything long ago.
PROBE = textwrap.dedent("""
    import os, sys, tempfile
    os.environ["TOKEXPLORER_SETTINGS_DIR"] = tempfile.mkdtemp()
    if __name__ == "__main__":
        from PySide6.QtWidgets import QApplication
        app = QApplication([])
        from tokexplorer.gui.main_window import MainWindow
        window = MainWindow()
        window.workspaces.switch("Explore")
        window.show()
        app.processEvents()
        heavy = ("pyqtgraph", "tokexplorer.gui.panels.plots", "tokexplorer.gui.panels.learn",
                 "tokexplorer.core.lesson", "tokexplorer.gui.panels.glitch", "tokexplorer.gui.panels.chat")
        print(sorted(m for m in heavy if m in sys.modules))
        window.workspaces.switch("Train")
        app.processEvents()
        print("pyqtgraph" in sys.modules, window.lazy_views["plots"].built)
        window.close()
""")


def test_the_first_window_imports_no_plots_and_no_lessons(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                         env={**__import__("os").environ, "QT_QPA_PLATFORM": "offscreen"})
    assert out.returncode == 0, out.stderr
    first, after_train = out.stdout.splitlines()[-2:]
    assert first == "[]"
    assert after_train == "True True"  # the Train workspace made Plots, importing pyqtgraph


def test_every_lazy_view_is_made_once_and_fills_its_dock(window, qtbot):
    for attr, lazy in window.lazy_views.items():
        view = getattr(window, attr)  # made on first asking
        assert lazy.built and getattr(window, attr) is view and view.parent() is lazy


def test_the_merge_tree_made_after_the_caret_moved_shows_the_carets_token(window, qtbot):
    window.state.set_tokenizer("gpt2")
    window.documents.set_text("he said hello")
    wait_settled(qtbot, window)
    window.editor.setFocus()
    cursor = window.editor.textCursor()
    cursor.setPosition(10)
    window.editor.setTextCursor(cursor)
    qtbot.waitUntil(lambda: window.state.caret >= 0)
    assert not window.lazy_views["merge_tree"].built
    window.show_view("merges", switch=True)
    qtbot.waitUntil(lambda: window.merge_tree.tree is not None and window.merge_tree.tree.id == 23748,
                    timeout=10_000)
