"""A dock's content built the first time it is shown: views that cost a heavy import (the plots
import pyqtgraph: about half a second) are not paid for at start, only when first looked at.

`LazyView(factory)` stands in the dock; `view()` builds the real widget (calling `factory`, which
may import what it needs) and puts it inside, once; showing the stand-in calls it. The view built
late must read the state as it is then (it missed the signals before it existed): that is the
factory's and the view's business, not this module's.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtWidgets import QVBoxLayout, QWidget


class LazyView(QWidget):
    """Holds the place of the widget `factory()` makes, and makes it when first shown."""

    def __init__(self, factory: Callable[[], QWidget], parent: QWidget | None = None):
        super().__init__(parent)
        self._factory = factory
        self._view: QWidget | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)

    @property
    def built(self) -> bool:
        return self._view is not None

    @property
    def up_to_date(self) -> bool:
        """The view's own `up_to_date` (what a screenshot waits for); nothing to wait for unmade."""
        return self._view is None or getattr(self._view, "up_to_date", True)

    def view(self) -> QWidget:
        """The real widget, made now if it was not yet."""
        if self._view is None:
            self._view = self._factory()
            self.layout().addWidget(self._view)
            if self.isVisible():  # subtle: else the layout shows it only from the event loop
                self._view.show()
        return self._view

    def showEvent(self, event) -> None:
        self.view()
        super().showEvent(event)
