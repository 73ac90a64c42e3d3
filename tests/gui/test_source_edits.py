"""The real editor keeps a file's own line breaks through random edits: after each edit, its
source (what is tokenized and saved) equals a slow model's, the worker's copy fed the editor's
snapshots equals it, and the source read back as a file gives the editor's text again."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings, strategies as st
from PySide6.QtGui import QTextCursor

from tokexplorer.gui.editor.editor import TokenEditor
from tokexplorer.core.positions import TextMirror, editor_text, to_utf16
from tokexplorer.gui.state import AppState

from .test_positions import LINE_ENDS, _reference_follow, _reference_items


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=LINE_ENDS, max_size=20), st.lists(
    st.tuples(st.floats(0, 1), st.integers(0, 3), st.text(alphabet="x😀\n\u2028\x85", max_size=3)),
    max_size=6))
@example("aaaa\n\raaaaa", [(0.5, 0, "\n"), (4 / 13, 1, "")])  # a typed break after a lone CR
@example("\ra\n", [(0.5, 0, "\n\n")])  # two typed breaks after a lone CR's line
def test_editor_source_follows_random_edits(qapp, text, edits):
    editor = TokenEditor(AppState())
    try:
        editor.load_text(editor_text(text))
        mirror = TextMirror(editor.snapshot(full=True).text)
        items, newline = _reference_items(text)
        for where, removed, inserted in edits:
            shown = editor.display_text()
            i = int(where * len(shown))
            j = min(len(shown), i + removed)
            bounds = to_utf16(shown, np.arange(len(shown) + 1)).tolist()
            cursor = QTextCursor(editor.document())
            cursor.setPosition(bounds[i])
            cursor.setPosition(bounds[j], QTextCursor.MoveMode.KeepAnchor)
            cursor.insertText(inserted)
            _reference_follow(items, newline, i, j, inserted)
            delta = editor.snapshot()
            if delta.text is not None:
                mirror.reset(delta.text)
            else:
                for edit in delta.edits:
                    mirror.apply(*edit)
            source = editor.user_text()
            assert source == "".join(items)
            assert mirror.text == source and mirror.len16 == delta.length16
            assert mirror.agrees(delta.probes)  # the worker's check finds nothing wrong
            assert editor_text(source).text == editor.display_text()
    finally:
        editor.deleteLater()
