"""Chat templates, counted exactly: a conversation rendered to the text a model receives, then
tokenized with its special tokens, with per-message counts and the template's overhead.

A template is Jinja, as in a Hugging Face `tokenizer_config.json` (`chat_template`), rendered in a
child process with time and memory limits (`core.chat.process`), in a sandbox that also bounds
steps and sizes (`core.chat.sandbox`): a template that loops or grows is stopped with a message.
The named formats are templates too, written here from the formats' published descriptions:
- `chatml`: `<|im_start|>role\\ncontent<|im_end|>\\n` (Qwen's native format; on cl100k_base with
  `<|im_start|>` = 100264 and `<|im_end|>` = 100265, as tiktoken's README extends it);
- `harmony`: `<|start|>role<|message|>content<|end|>`, the o200k format whose special tokens
  tiktoken defines (o200k_harmony); its counts follow OpenAI's published rule for GPT-4o
  (3 tokens per message, 3 to prime the reply);
- `deepseek`: `<｜begin▁of▁sentence｜>system<｜User｜>…<｜Assistant｜>…<｜end▁of▁sentence｜>`;
- `mistral`: Tekken's `<s>[INST]…[/INST]…</s>`, the system prompt put before the last user message
  (checked in the tests against mistral-common's own encoder).

Which message owns which tokens: message k owns what its addition appended, the render of the
first k messages past that of the first k - 1. Where a template moves text around (Mistral
puts the system prompt in the last user message), a prefix is not the start of the whole text;
then message k's part runs from the previous part's end to the end of its content. Past 64
messages the prefixes are not each rendered (that is quadratic): `sandbox.render_layout`
reads them from one render and checks a sample. Every token
belongs to exactly one part (a message, or the generation prompt), so the parts add up to the total. This module renders and
counts; it does not know any window.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from tokexplorer.core.chat.sandbox import MAX_OUTPUT, MAX_SECONDS, MAX_STEPS  # noqa: F401 - the budgets
from tokexplorer.core.encoding import Encoding
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

ROLES = ("system", "user", "assistant", "tool")


@dataclass(frozen=True)
class Message:
    role: str
    content: str


@dataclass(frozen=True)
class ChatFormat:
    """A named chat format: its template and the special tokens it needs (name -> id)."""

    name: str
    description: str
    template: str
    special_tokens: dict[str, int]
    bos_token: str = ""
    eos_token: str = ""


CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
HARMONY_TEMPLATE = (
    "{% for m in messages %}<|start|>{{ m.role }}<|message|>{{ m.content }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}<|start|>assistant<|message|>{% endif %}"
)
DEEPSEEK_TEMPLATE = (
    "{{ bos_token }}"
    "{% for m in messages %}"
    "{% if m.role == 'system' %}{{ m.content }}"
    "{% elif m.role == 'user' %}<｜User｜>{{ m.content }}"
    "{% elif m.role == 'assistant' %}<｜Assistant｜>{{ m.content }}{{ eos_token }}"
    "{% else %}<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{{ m.content }}"
    "<｜tool▁output▁end｜><｜tool▁outputs▁end｜>{% endif %}"
    "{% endfor %}"
    "{% if add_generation_prompt %}<｜Assistant｜>{% endif %}"
)
MISTRAL_TEMPLATE = (
    "{% set ns = namespace(last=-1, system='') %}"
    "{% for m in messages %}{% if m.role == 'user' %}{% set ns.last = loop.index0 %}"
    "{% elif m.role == 'system' %}{% set ns.system = ns.system + ('\n\n' if ns.system else '') + m.content %}"
    "{% elif m.role == 'tool' %}{{ raise_exception('tool results need a tool call id in this format') }}"
    "{% endif %}{% endfor %}"
    "{{ bos_token }}"
    "{% for m in messages %}"
    "{% if m.role == 'user' %}[INST]{% if loop.index0 == ns.last and ns.system %}{{ ns.system }}\n\n{% endif %}"
    "{{ m.content }}[/INST]"
    "{% elif m.role == 'assistant' %}{{ m.content }}{{ eos_token }}{% endif %}"
    "{% endfor %}"
)

# Tokenizer name -> its named format. Special ids: chatml on cl100k_base from tiktoken's README;
# harmony's from tiktoken's o200k_harmony; Qwen's and DeepSeek's are the tokenizers' own.
FORMATS: dict[str, ChatFormat] = {
    "chatml": ChatFormat("chatml", "ChatML: <|im_start|>role\\n…<|im_end|>", CHATML_TEMPLATE,
                         {"<|im_start|>": 100264, "<|im_end|>": 100265}),
    "harmony": ChatFormat("harmony", "OpenAI harmony: <|start|>role<|message|>…<|end|>", HARMONY_TEMPLATE,
                          {"<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008}),
    "deepseek": ChatFormat("deepseek", "DeepSeek: <｜User｜>…<｜Assistant｜>…<｜end▁of▁sentence｜>",
                           DEEPSEEK_TEMPLATE, {}, bos_token="<｜begin▁of▁sentence｜>",
                           eos_token="<｜end▁of▁sentence｜>"),
    "mistral": ChatFormat("mistral", "Mistral Tekken: <s>[INST]…[/INST]…</s>", MISTRAL_TEMPLATE, {},
                          bos_token="<s>", eos_token="</s>"),
}
DEFAULT_FORMATS = {"cl100k_base": "chatml", "o200k_base": "harmony", "deepseek-v4": "deepseek",
                   "tekken": "mistral"}


def default_format(tok: Tokenizer) -> str | None:
    """The format a tokenizer's chats use: its own template, or a named one, or None."""
    if getattr(tok, "chat_template", None):
        return "template"
    if tok.name in DEFAULT_FORMATS:
        return DEFAULT_FORMATS[tok.name]
    specials = tok.special_tokens
    if "<|im_start|>" in specials and "<|im_end|>" in specials:
        return "chatml"
    if "<｜User｜>" in specials and "<｜Assistant｜>" in specials:
        return "deepseek"
    return None


def parse_messages(data: str, source: str = "messages") -> list[Message]:
    """A conversation from JSON: a list of {"role", "content"}, or {"messages": [...]}.

    >>> parse_messages('[{"role": "user", "content": "hi"}]')
    [Message(role='user', content='hi')]
    """
    try:
        value = json.loads(data)
    except json.JSONDecodeError as exc:
        raise TokexplorerError(f"{source} is not valid JSON (line {exc.lineno}, column {exc.colno}): "
                               f"{exc.msg}") from None
    if isinstance(value, dict) and "messages" in value:
        value = value["messages"]
    if not isinstance(value, list):
        raise TokexplorerError(f"{source}: expected a list of messages like "
                               '[{"role": "user", "content": "Hello"}]')
    messages = []
    for i, m in enumerate(value):
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise TokexplorerError(f"{source}: message {i} needs a string \"role\" and a string \"content\"")
        if m["role"] not in ROLES:
            raise TokexplorerError(f"{source}: message {i} has the role {m['role']!r}; "
                                   f"use one of {', '.join(ROLES)}")
        messages.append(Message(m["role"], m["content"]))
    return messages


class TemplateError(TokexplorerError):
    """A chat template that does not render: the message says why and on which line."""


MAX_MESSAGES = 10_000  # a conversation's budget: messages (and MAX_OUTPUT characters of content)


def _render(template: str, messages: Sequence[Message], *, add_generation_prompt: bool, bos_token: str,
            eos_token: str, with_cuts: bool, keep_spare: bool) -> tuple[str, list[int] | None]:
    from tokexplorer.core.chat.process import TemplateProcessError, runner

    if len(messages) > MAX_MESSAGES:
        raise TemplateError(f"the conversation has {len(messages):,} messages, over chat's budget of "
                            f"{MAX_MESSAGES:,}; count it in parts")
    size = sum(len(m.content) for m in messages)
    if size > MAX_OUTPUT:
        raise TemplateError(f"the conversation's messages hold {size:,} characters, over chat's budget of "
                            f"{MAX_OUTPUT:,}; count it in parts")
    try:
        return runner(keep_spare).render(template, [(m.role, m.content) for m in messages],
                                         add_generation_prompt=add_generation_prompt, bos_token=bos_token,
                                         eos_token=eos_token, with_cuts=with_cuts)
    except TemplateProcessError as exc:
        raise TemplateError(str(exc)) from None


def render(template: str, messages: Sequence[Message], *, add_generation_prompt: bool,
           bos_token: str = "", eos_token: str = "", keep_spare: bool = False) -> str:
    """The text a template makes of a conversation, rendered in a process of its own with time and
    memory limits (`core.chat.process`); TemplateError with the line when it fails.

    >>> render(CHATML_TEMPLATE, [Message("user", "hi")], add_generation_prompt=True)
    '<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
    """
    return _render(template, messages, add_generation_prompt=add_generation_prompt, bos_token=bos_token,
                   eos_token=eos_token, with_cuts=False, keep_spare=keep_spare)[0]


@dataclass(frozen=True)
class ChatPart:
    """One message's share of the sequence (or the generation prompt: role "", index -1)."""

    index: int
    role: str
    start: int  # code-point span in the rendered text
    end: int
    tokens: int  # tokens of the sequence that start in this part
    content_tokens: int  # tokens of the message's content encoded on its own


@dataclass(frozen=True)
class ChatCount:
    """A rendered conversation and its tokens."""

    format: str
    text: str
    encoding: Encoding
    parts: tuple[ChatPart, ...]

    @property
    def total(self) -> int:
        return len(self.encoding)

    @property
    def overhead(self) -> int:
        """Tokens the template adds beyond the messages' contents."""
        return self.total - sum(p.content_tokens for p in self.parts)


_WITH_SPECIALS: "weakref.WeakKeyDictionary[Tokenizer, dict[str, Tokenizer]]" = weakref.WeakKeyDictionary()


def chat_tokenizer(tok: Tokenizer, fmt: ChatFormat) -> Tokenizer:
    """The tokenizer with the format's special tokens (cl100k_base gains <|im_start|>…); made once
    per tokenizer and format (building cl100k_base's anew took 0.8 s, at every count while typing)."""
    missing = {t: i for t, i in fmt.special_tokens.items() if t not in tok.special_tokens}
    if not missing:
        return tok
    if tok.name not in DEFAULT_FORMATS or DEFAULT_FORMATS[tok.name] != fmt.name \
            or not hasattr(tok, "with_special_tokens"):
        raise TokexplorerError(
            f"{tok.name} has no {', '.join(missing)} token(s), which the {fmt.name} format needs; "
            f"choose a format of this tokenizer")
    try:
        made = _WITH_SPECIALS.setdefault(tok, {})
    except TypeError:  # a tokenizer that takes no weak reference: made each time
        return tok.with_special_tokens(missing)
    if fmt.name not in made:
        made[fmt.name] = tok.with_special_tokens(missing)
    return made[fmt.name]


def count_chat(tok: Tokenizer, messages: Sequence[Message], *, format: str | None = None,
               add_generation_prompt: bool = True, keep_spare: bool = False) -> ChatCount:
    """Render the conversation in `format` (a name in FORMATS, "template" for the tokenizer's own
    chat_template, or None for the tokenizer's default) and count its tokens per message.
    The template is rendered in a child process (`core.chat.process`; `keep_spare` keeps one
    started ahead, for a caller that asks often); the conversation's budget is MAX_MESSAGES
    messages and MAX_OUTPUT characters, refused past it.

    >>> from tokexplorer.core.registry import get_builtin
    >>> c = count_chat(get_builtin("cl100k_base"), [Message("user", "Hello!")])
    >>> c.text, c.total, [p.tokens for p in c.parts]
    ('<|im_start|>user\\nHello!<|im_end|>\\n<|im_start|>assistant\\n', 10, [7, 3])
    """
    name = format or default_format(tok)
    if name is None:
        raise TokexplorerError(
            f"{tok.name} has no chat format: open its tokenizer.json with a tokenizer_config.json "
            f"that has a chat_template, or pick one of {', '.join(FORMATS)}")
    if name == "template":
        template = getattr(tok, "chat_template", None)
        if not template:
            raise TokexplorerError(f"{tok.name} has no chat_template (its tokenizer_config.json has none)")
        bos, eos = getattr(tok, "bos_token", "") or "", getattr(tok, "eos_token", "") or ""
        encoder = tok
    elif name in FORMATS:
        fmt = FORMATS[name]
        template, bos, eos = fmt.template, fmt.bos_token, fmt.eos_token
        encoder = chat_tokenizer(tok, fmt)
    else:
        raise TokexplorerError(f"unknown chat format {name!r}; use one of {', '.join(FORMATS)} or template")

    text, cuts = _render(template, messages, add_generation_prompt=add_generation_prompt, bos_token=bos,
                         eos_token=eos, with_cuts=True, keep_spare=keep_spare)
    encoding = encoder.encode(text, allowed_special="all")
    starts = encoding.starts
    parts = []
    for k in range(len(messages) + 1):
        lo, hi = cuts[k], cuts[k + 1]
        if k == len(messages) and hi == lo:
            break
        first = int(np.searchsorted(starts, lo)) if k else 0  # starts ascend: the tokens before lo
        last = int(np.searchsorted(starts, hi)) if k < len(messages) else len(starts)
        if k == len(messages):
            parts.append(ChatPart(-1, "", lo, hi, len(starts) - first, 0))
        else:
            m = messages[k]
            content = len(encoder.encode(m.content, allowed_special="none")) if m.content else 0
            parts.append(ChatPart(k, m.role, lo, hi, last - first, content))
    return ChatCount(name, text, encoding, tuple(parts))
