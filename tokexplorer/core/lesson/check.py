"""What a step's numbers come to on a text: each number's app value beside the value the lecture
printed, whether they agree, and, where they do not, why (the lecture's text is not shipped; the
value could not be computed).

`check_step` is what the tokenizing server runs for the Learn view (`protocol.LessonCheck`) and
what the tests call in process; `step_text` says which text a step works on. Values are written
out with `step.render`, long lists shortened for the screen by `shorten`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tokexplorer.core.lesson.step import Given, Number, Step, render
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError, clean_text

SHOWN_ITEMS = 24  # of a long list, the screen shows the start


@dataclass(frozen=True)
class Checked:
    """One number of a step, checked."""

    label: str
    lecture: str  # as the notebook printed it ("" where it printed none)
    app: str  # the app's value, written the same way ("" when it could not be computed)
    agrees: bool | None  # None: nothing to compare (no lecture value, or no app value)
    note: str  # why they differ (or why there is no app value); "" when they agree
    value: object = None  # the app's value itself (None when it could not be computed)


def step_text(step: Step, yours: str | None = None) -> str:
    """The text a step works on: its own, or for a step on the user's text, the text the user
    gave (`yours`), else the shipped stand-in."""
    if step.source.kind == "yours" and yours:
        return yours
    return step.source.default_text()


def check_number(number: Number, step: Step, given: Given) -> Checked:
    lecture = "" if number.lecture is None else render(number.lecture)
    try:
        value = number.compute(given)
    except TokexplorerError as exc:
        return Checked(number.label, lecture, "", None, f"cannot compute it here: {exc}")
    app = render(value)
    if number.lecture is None:
        return Checked(number.label, lecture, app, None, "", value)
    if value == number.lecture:
        return Checked(number.label, lecture, app, True, "", value)
    if step.source.kind == "yours":
        why = (f"the lecture computed this on {step.source.what}, which tokexplorer does not ship: "
               "paste or open it to compare")
    else:
        why = number.note or "the app's value differs from the lecture's"
    return Checked(number.label, lecture, app, False, why, value)


def check_step(step: Step, text: str, tokenizer: Callable[[str], Tokenizer]) -> tuple[Checked, ...]:
    """Each number of `step` computed on `text` with tokenizers by name, beside the lecture's.

    >>> from tokexplorer.core.lesson.chapters import step_by_key
    >>> step = step_by_key("unicode/code-points")
    >>> [(c.app, c.agrees) for c in check_step(step, step_text(step), None)]
    [('[104, 101, 108, 108, 111]', True), ("'h'", True)]
    """
    given = Given(clean_text(text), tokenizer)  # a lone surrogate becomes U+FFFD, as tiktoken does
    return tuple(check_number(number, step, given) for number in step.numbers)


def shorten(written: str, limit: int = 400) -> str:
    """A long value cut for the screen, saying how long it was.

    >>> shorten("x" * 500, 10)
    'xxxxxxxxxx… (500 characters)'
    """
    return written if len(written) <= limit else f"{written[:limit]}… ({len(written):,} characters)"
