"""A real tokexplorer process for tests/gui/test_autosave_crash.py: `python -m tokexplorer ARGS`
as it is (tokexplorer.cli.main.main), with one hook once the window is shown, reporting JSON lines on
stdout.

    python crash_child.py type TEXT_FILE ARGS...  type TEXT_FILE's text (UTF-8) at the end of the
                                                  editor, say {"typed": ...}, and keep running
    python crash_child.py answer ARGS...          answer a restore question with "restore"; once
                                                  the text is tokenized say what the window holds
                                                  ({"asked", "text", ...}) and close as File > Quit
                                                  does (unsaved changes discarded)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(mode: str, args: list[str]) -> int:
    from PySide6.QtGui import QTextCursor

    from tokexplorer.cli import main as cli
    from tokexplorer.gui import app, main_window
    from tokexplorer.gui.widgets import dialogs

    sys.path.insert(0, str(Path(__file__).parent))
    from helpers import type_text

    asked = []
    dialogs.Dialogs.ask_restore = lambda self, *question: asked.append(question) or "restore"
    dialogs.Dialogs.ask_unsaved = lambda self, name: "discard"
    if mode == "type":
        text = Path(args.pop(0)).read_text(encoding="utf-8")
    show = main_window.MainWindow.show

    def say(**what) -> None:
        print(json.dumps(what, ensure_ascii=True), flush=True)

    def hooked_show(window) -> None:
        show(window)

        def act() -> None:
            if mode == "type":
                window.editor.moveCursor(QTextCursor.MoveOperation.End)
                type_text(window.editor, text)
                say(typed=window.editor.user_text())
            else:
                state = window.state
                say(asked=asked, text=window.editor.user_text(), modified=state.modified,
                    path=str(state.path) if state.path else None, newline=state.newline,
                    tokenizer=state.tokenizer, ids=list(map(int, state.result.encoding.ids)))
                window.close()

        app.when_settled(window, act, app.SCREENSHOT_TIMEOUT_S)

    main_window.MainWindow.show = hooked_show
    return cli.main(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2:]))
