"""The records of the lesson: a chapter is a list of steps; a step says what text to load, which
tokenizer, special-token policy and view to bring forward, what to look at, and which numbers the
lecture printed, each with the function that computes the app's own value.

This module holds records and the one way values are written out (`render`); the numbers are
computed in `numbers`, the chapters written in `chapters`, compared in `check`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from tokexplorer.core.resources import resource_path

if TYPE_CHECKING:
    from tokexplorer.core.tokenizer import Tokenizer

# The window's views, by the names `MainWindow.show_view` takes.
VIEWS = ("editor", "ids", "chunks", "vocab", "inspector", "merges", "trace", "chat", "training", "plots",
         "compare", "bpe", "glitch")


@dataclass(frozen=True)
class Source:
    """The text a step loads: written in the step (`inline`), a file shipped in resources/
    (`resource`), or the user's own (`yours`), where the lecture used a text tokexplorer may not
    ship (a blog article, a Wikipedia page); `path` is then the shipped stand-in the step shows
    until the user gives a text, and `what` names the lecture's text."""

    kind: str  # "inline" | "resource" | "yours"
    text: str = ""  # inline: the text itself
    path: str = ""  # resource: its path under resources/; yours: the stand-in's ("" for none)
    what: str = ""  # yours: the text the lecture used

    def describe(self) -> str:
        """One line for the view: where the step's text comes from."""
        if self.kind == "inline":
            return "Text: written in the step (shown in the editor when loaded)."
        if self.kind == "resource":
            return f"Text: {self.path}, shipped with tokexplorer."
        stand_in = f" Until you do, the step uses {self.path}." if self.path else ""
        return f"Text: your own. The lecture used {self.what}, which tokexplorer does not ship: paste or open it.{stand_in}"

    def default_text(self) -> str:
        """The text the step uses when the user has given none."""
        if self.kind == "inline":
            return self.text
        if not self.path:
            return ""
        return resource_path(*self.path.split("/")).read_text(encoding="utf-8")


def inline(text: str) -> Source:
    return Source("inline", text=text)


def resource(path: str) -> Source:
    return Source("resource", path=path)


def yours(what: str, stand_in: str = "") -> Source:
    return Source("yours", path=stand_in, what=what)


@dataclass(frozen=True)
class Given:
    """What a number is computed from: the step's text, and tokenizers by name (the registry's in
    process, the server's own in the window)."""

    text: str
    tokenizer: Callable[[str], "Tokenizer"]


@dataclass(frozen=True)
class Number:
    """A number of the step: `compute` gives the app's value; `lecture` is the value the notebook
    `notebook` ("000" to "004", the file's prefix in the seeds) printed, as `printed` shows it
    there (by default `render(lecture)`), or None where the lecture printed no number and the
    app's value is shown alone. `note` says why the two differ on the step's own text, where
    they do."""

    label: str
    compute: Callable[[Given], object]
    lecture: object = None
    notebook: str = ""
    printed: str = ""
    note: str = ""

    def printed_text(self) -> str:
        return self.printed or render(self.lecture)


@dataclass(frozen=True)
class Step:
    key: str  # "chapter/step", unique
    title: str
    explanation: str  # two or three sentences: what to look at
    source: Source
    view: str  # a name of VIEWS
    tokenizer: str | None = None  # the tokenizer to select; None keeps the current one
    policy: str | None = None  # the special-token policy when it matters ("refuse", "all", "none")
    numbers: tuple[Number, ...] = ()


@dataclass(frozen=True)
class Chapter:
    key: str
    title: str
    steps: tuple[Step, ...]


def render(value: object) -> str:
    """A value as the notebooks print it: lists and strings as Python's repr, ratios to two places.

    >>> render([104, 101]), render("h"), render(1.27), render(True)
    ('[104, 101]', "'h'", '1.27', 'True')
    """
    if isinstance(value, float):
        return f"{value:.2f}"
    return repr(value)
