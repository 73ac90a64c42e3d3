"""The quirks gallery: short texts that show why tokenization explains odd LLM behaviour.

Each quirk is a sample text with a one-line question, the observation a user should make when
encoding it with the built-ins side by side, what to try next, and where it makes its point: the
view ("editor", or "compare" for side-by-side panes) and the tokenizers its observation names. The
facts are the lecture's, checked by the tests against the real vocabularies. The samples live as
data in resources/samples (one JSON file each: question, observation, try, view, tokenizers, the
texts); this module reads them. Views (the app's Samples menu, `tokexplorer quirks`) only display
them, with `description`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from tokexplorer.core.resources import resource_path
from tokexplorer.core.tokenizer import TokexplorerError


@dataclass(frozen=True)
class Quirk:
    name: str
    question: str
    samples: tuple[tuple[str, str], ...]  # (label, text), compared with each other
    observation: str
    try_next: str  # what to do next in the app to see more of it
    allowed_special: str | None = None  # the policy to encode the sample with, if not the default
    view: str = "editor"  # where it opens: "editor" or "compare"
    tokenizers: tuple[str, ...] = ("cl100k_base",)  # built-ins it opens with (compare: one per pane)


def load_quirks() -> list[Quirk]:
    """The samples in resources/samples, one JSON file each, in the order of their file names.

    >>> [q.name for q in load_quirks()][:2]
    ['long-token', 'non-english']
    """
    quirks = []
    for path in sorted(resource_path("samples").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        quirks.append(Quirk(
            name=path.stem.split("-", 1)[1], question=data["question"],
            samples=tuple((s["label"], s["text"]) for s in data["samples"]),
            observation=data["observation"], try_next=data["try"], allowed_special=data.get("allowed_special"),
            view=data.get("view", "editor"), tokenizers=tuple(data.get("tokenizers", ("cl100k_base",)))))
    return quirks


QUIRKS: list[Quirk] = load_quirks()


def sample_text(q: Quirk) -> str:
    """The text a quirk opens with: its samples one after the other, each on its own line(s).

    >>> sample_text(quirk("trailing-space"))
    'Here is a tag line: Just do it.\\nHere is a tag line:\\nHere is a tag line: '
    """
    return "".join(text if i == len(q.samples) - 1 or text.endswith("\n") else text + "\n"
                   for i, (_, text) in enumerate(q.samples))


def description(q: Quirk) -> str:
    """What a quirk shows and what to try next, in one paragraph (the Samples menu's status tip).

    >>> description(quirk("case")).split(" Try next: ")[1]
    "Put ' Egg' at the start of a line and after a word, and try the same words in o200k_base."
    """
    return f"{q.observation} Try next: {q.try_next}"


def quirk(name: str) -> Quirk:
    """A quirk by name.

    >>> quirk("long-token").samples
    (('identifier', '.DefaultCellStyle'),)
    """
    for q in QUIRKS:
        if q.name == name:
            return q
    raise TokexplorerError(f"no quirk {name!r}; the quirks are: {', '.join(q.name for q in QUIRKS)}")
