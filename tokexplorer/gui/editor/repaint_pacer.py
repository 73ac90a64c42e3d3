"""Holds the window's repaint for at most two frames while tokens are on their way, so a keystroke
is painted once, with its tokens, rather than twice (the new text in the old colours, then again).

Qt paints a window when its posted UpdateRequest comes back through the event loop; a keystroke
posts one at once, and the tokenizing server's answer a few milliseconds later asks for another. While some
watched `TokenizeService` has a request out that was sent less than `hold_s` ago, the pacer holds
the window's UpdateRequest back, and lets it go when every such request has been answered or the
time is up, whichever comes first. With four compare panes on the 1 MB book that halves the
paints per keystroke (8.5 to 4.0: one per pane).

What it does not do: hold anything for longer than `hold_s` (the next paint after a hold always
goes through, so fast typing cannot starve the screen), or hold other top-level windows (floating
docks, dialogs). A `repaint()` of the window's widgets while a hold is on waits with it; a
`grab()` (screenshots) paints directly and never waits.

subtle: Qt posts no new UpdateRequest while one it posted is pending, and a held one counts as
pending; so letting go means posting one, which also marks everything dirtied meanwhile.
"""

from __future__ import annotations

import time
import weakref

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QWidget

# Two frames at 60 Hz. The four compare panes' answers come one after another:
# with one frame the hold often ran out before the last, and the window painted twice after all
# (four panes, 1 MB book, interleaved runs: CPU per keystroke 33-43 ms against 39-47 with one
# frame, typing stall 27-33 against 34-66 ms). The editor alone is answered within a frame.
HOLD_S = 0.033


class RepaintPacer(QObject):
    """Installed on `window`; `watch` each TokenizeService whose answers the window paints."""

    def __init__(self, window: QWidget, hold_s: float = HOLD_S):
        super().__init__(window)
        self.hold_s = hold_s
        self.held = 0  # repaints held back so far (the tests read it)
        self._window = window
        self._services: weakref.WeakSet = weakref.WeakSet()
        self._held_at: float | None = None  # when the repaint being held was asked for
        self._letting_go = False  # the next repaint goes through
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._let_go)
        window.installEventFilter(self)

    def watch(self, service) -> None:
        """Wait for `service`'s answers (a `TokenizeService`) before repainting, `hold_s` at most."""
        self._services.add(service)
        service.busy.connect(self._on_busy)

    def _awaited(self, now: float) -> bool:
        return any(s.awaited(now, self.hold_s) for s in list(self._services))

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() != QEvent.Type.UpdateRequest or watched is not self._window:
            return False
        if self._letting_go:
            self._letting_go = False
            return False
        now = time.perf_counter()
        if self._held_at is None:
            if not self._awaited(now):
                return False
            self._held_at = now
            self._timer.start(max(1, round(self.hold_s * 1000)))
        self.held += 1
        return True

    def _on_busy(self, message: str) -> None:
        """A service answered (its busy message went blank): go on if nothing else is awaited.

        subtle: the answer's views update after this signal, in the same call; the posted
        repaint comes back through the event loop later, so it includes them."""
        if not message and self._held_at is not None and not self._awaited(time.perf_counter()):
            self._let_go()

    def _let_go(self) -> None:
        if self._held_at is None:
            return
        self._held_at = None
        self._timer.stop()
        self._letting_go = True
        QCoreApplication.postEvent(self._window, QEvent(QEvent.Type.UpdateRequest),
                                   Qt.EventPriority.LowEventPriority.value)
