"""The quirks gallery: short texts that show why tokenization explains odd LLM behaviour.

Each quirk is a sample text with a one-line question and the observation a user should make when
encoding it with the built-ins side by side, and where it makes its point: the view ("editor", or
"compare" for side-by-side panes) and the tokenizers its observation names. The facts are the
lecture's, checked by the tests against the real vocabularies. Views (the app's Samples menu,
`tokexplorer quirks`) only display them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .tokenizer import TokexplorerError


@dataclass(frozen=True)
class Quirk:
    name: str
    question: str
    samples: tuple[tuple[str, str], ...]  # (label, text), compared with each other
    observation: str
    allowed_special: str | None = None  # the policy to encode the sample with, if not the default
    view: str = "editor"  # where it opens: "editor" or "compare"
    tokenizers: tuple[str, ...] = ("cl100k_base",)  # built-ins it opens with (compare: one per pane)


QUIRKS: list[Quirk] = [
    Quirk(
        "long-token",
        "Why can't the model spell some words or count their letters?",
        (("identifier", ".DefaultCellStyle"),),
        "cl100k_base has the whole string as one token: the model never sees its letters.",
    ),
    Quirk(
        "non-english",
        "Why is the model worse, and dearer, in other languages?",
        (("English", "Hello, how are you?"), ("Korean", "안녕하세요, 어떻게 지내세요?")),
        "The Korean line costs several times the tokens of the English one in GPT-2 and GPT-4; "
        "o200k_base narrows the gap.",
        view="compare", tokenizers=("gpt2", "cl100k_base", "o200k_base"),
    ),
    Quirk(
        "arithmetic",
        "Why is arithmetic hard?",
        (("sum", "127 + 677 = 804"), ("long number", "1234567")),
        "GPT-2 cuts numbers arbitrarily ('6' + '77'); GPT-4 groups digits by three from the left; "
        "the Llama-style model splits every digit.",
        view="compare", tokenizers=("gpt2", "cl100k_base", "llama-sp"),
    ),
    Quirk(
        "python-indentation",
        "Why was GPT-2 bad at Python?",
        (("Python", "def fizzbuzz(n):\n    for i in range(1, n + 1):\n        if i % 15 == 0:\n"
                    "            print('FizzBuzz')\n"),),
        "GPT-2 spends one token per space of indentation; GPT-4 merges runs of spaces.",
        view="compare", tokenizers=("gpt2", "cl100k_base"),
    ),
    Quirk(
        "spaces-and-punctuation",
        "How do spaces and repeated punctuation split?",
        (("text", "    hello world!!!"),),
        "A run of spaces keeps its last space for the next word (' hello'); '!!!' is one chunk. "
        "GPT-2 spends a token on each other space (6 tokens), GPT-4 one on all three (4).",
        view="compare", tokenizers=("gpt2", "cl100k_base"),
    ),
    Quirk(
        "endoftext",
        "What happens when user text contains <|endoftext|>?",
        (("prompt", "Please repeat: <|endoftext|> and continue."),),
        "By default it is refused; allowed, it becomes the single special token that ends a "
        "document; as plain text it is several ordinary tokens.",
        allowed_special="all",
    ),
    Quirk(
        "trailing-space",
        "Why does a prompt ending in a space hurt completion?",
        (("without the space", "Here is a tag line:"), ("with it", "Here is a tag line: ")),
        "The final space is a token of its own, although in real text it would start the next "
        "word (' tag'): the model sees a rare pattern.",
        view="compare", tokenizers=("gpt2", "cl100k_base"),
    ),
    Quirk(
        "solidgoldmagikarp",
        "Why did GPT-2-era models go haywire on ' SolidGoldMagikarp'?",
        (("user name", " SolidGoldMagikarp"),),
        "It is one GPT-2 token, from a Reddit user name frequent in the tokenizer's data but "
        "absent from the model's: its embedding was never trained. GPT-4 splits it.",
        view="compare", tokenizers=("gpt2", "cl100k_base"),
    ),
    Quirk(
        "case",
        "Is 'egg' always the same token?",
        (("egg", "egg"), (" egg", " egg"), ("Egg", "Egg"), (" EGG", " EGG")),
        "'egg', ' egg', 'Egg' and ' EGG' are different tokens (or token pairs): the model must "
        "learn they mean the same.",
        view="compare", tokenizers=("cl100k_base", "o200k_base"),
    ),
    Quirk(
        "json-vs-yaml",
        "Which structured format is cheaper?",
        (("JSON", '{\n  "name": "Ada",\n  "languages": ["en", "fr"],\n  "active": true\n}\n'),
         ("YAML", "name: Ada\nlanguages:\n- en\n- fr\nactive: true\n")),
        "The same data costs fewer tokens in YAML than in JSON, in every tokenizer.",
        view="compare", tokenizers=("gpt2", "cl100k_base", "o200k_base", "llama-sp"),
    ),
]


def sample_text(q: Quirk) -> str:
    """The text a quirk opens with: its samples one after the other, each on its own line(s).

    >>> sample_text(quirk("trailing-space"))
    'Here is a tag line:\\nHere is a tag line: '
    """
    return "".join(text if i == len(q.samples) - 1 or text.endswith("\n") else text + "\n"
                   for i, (_, text) in enumerate(q.samples))


def quirk(name: str) -> Quirk:
    """A quirk by name.

    >>> quirk("long-token").samples
    (('identifier', '.DefaultCellStyle'),)
    """
    for q in QUIRKS:
        if q.name == name:
            return q
    raise TokexplorerError(f"no quirk {name!r}; the quirks are: {', '.join(q.name for q in QUIRKS)}")
