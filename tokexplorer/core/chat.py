"""Chat templates, counted exactly: a conversation rendered to the text a model receives, then
tokenized with its special tokens, with per-message counts and the template's overhead.

A template is Jinja, as in a Hugging Face `tokenizer_config.json` (`chat_template`), rendered in a
sandbox with a step and size budget (a template that loops is stopped with a message, not a hang).
The named formats are templates too, written here from the formats' published descriptions:
- `chatml`: `<|im_start|>role\\ncontent<|im_end|>\\n` (Qwen's native format; on cl100k_base with
  `<|im_start|>` = 100264 and `<|im_end|>` = 100265, as tiktoken's README extends it);
- `harmony`: `<|start|>role<|message|>content<|end|>`, the o200k format whose special tokens
  tiktoken defines (o200k_harmony); its counts follow OpenAI's published rule for GPT-4o
  (3 tokens per message, 3 to prime the reply);
- `deepseek`: `<｜begin▁of▁sentence｜>system<｜User｜>…<｜Assistant｜>…<｜end▁of▁sentence｜>`;
- `mistral`: Tekken's `<s>[INST]…[/INST]…</s>`, the system prompt put before the last user message
  (checked in the tests against mistral-common's own encoder).

Which message owns which tokens: the conversation is rendered once per prefix (the first k
messages); message k owns what its addition appended. Where a template moves text around (Mistral
puts the system prompt in the last user message), a prefix is not the start of the whole text;
then message k's part runs from the previous part's end to the end of its content. Every token
belongs to exactly one part (a message, or the generation prompt), so the parts add up to the total. This module renders and
counts; it does not know any window.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Sequence

from tokexplorer.core.encoding import Encoding
from tokexplorer.core.tokenizer import Tokenizer, TokexplorerError

ROLES = ("system", "user", "assistant", "tool")
MAX_STEPS = 1_000_000  # loop iterations a template may take, all loops together
MAX_OUTPUT = 10_000_000  # characters a template may produce
MAX_SECONDS = 5.0


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


def _environment():
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    steps = [0]

    def counted_range(*args):
        for value in range(*args):
            steps[0] += 1
            if steps[0] > MAX_STEPS:
                raise TemplateError(f"the template loops too long (over {MAX_STEPS:,} steps)")
            yield value

    def raise_exception(message):
        raise TemplateError(f"the template refused the conversation: {message}")

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals.update(range=counted_range, raise_exception=raise_exception)
    env.filters["tojson"] = lambda value, indent=None: json.dumps(value, ensure_ascii=False, indent=indent)
    return env


def render(template: str, messages: Sequence[Message], *, add_generation_prompt: bool,
           bos_token: str = "", eos_token: str = "") -> str:
    """The text a template makes of a conversation; TemplateError with the line when it fails.

    >>> render(CHATML_TEMPLATE, [Message("user", "hi")], add_generation_prompt=True)
    '<|im_start|>user\\nhi<|im_end|>\\n<|im_start|>assistant\\n'
    """
    import jinja2

    try:
        compiled = _environment().from_string(template)
    except jinja2.TemplateSyntaxError as exc:
        raise TemplateError(f"the chat template has a syntax error on line {exc.lineno}: {exc.message}") from None
    context = {"messages": [{"role": m.role, "content": m.content} for m in messages],
               "add_generation_prompt": add_generation_prompt, "bos_token": bos_token,
               "eos_token": eos_token}
    out, size, deadline = [], 0, time.monotonic() + MAX_SECONDS
    try:
        for piece in compiled.generate(**context):
            out.append(piece)
            size += len(piece)
            if size > MAX_OUTPUT or time.monotonic() > deadline:
                raise TemplateError("the chat template runs away (too long or too much output); "
                                    "check its loops")
    except TemplateError:
        raise
    except jinja2.TemplateError as exc:
        line = _template_line(exc)
        raise TemplateError(f"the chat template failed{line}: {exc}") from None
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError,
            ZeroDivisionError) as exc:
        line = _template_line(exc)
        raise TemplateError(f"the chat template failed{line}: {type(exc).__name__}: {exc}") from None
    return "".join(out)


def _template_line(exc: BaseException) -> str:
    """' on line N' from the traceback frames Jinja maps to template lines, if any."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" on line {line}" if line else ""


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


def chat_tokenizer(tok: Tokenizer, fmt: ChatFormat) -> Tokenizer:
    """The tokenizer with the format's special tokens (cl100k_base gains <|im_start|>…)."""
    missing = {t: i for t, i in fmt.special_tokens.items() if t not in tok.special_tokens}
    if not missing:
        return tok
    if tok.name not in DEFAULT_FORMATS or DEFAULT_FORMATS[tok.name] != fmt.name \
            or not hasattr(tok, "with_special_tokens"):
        raise TokexplorerError(
            f"{tok.name} has no {', '.join(missing)} token(s), which the {fmt.name} format needs; "
            f"choose a format of this tokenizer")
    return tok.with_special_tokens(missing)


def count_chat(tok: Tokenizer, messages: Sequence[Message], *, format: str | None = None,
               add_generation_prompt: bool = True) -> ChatCount:
    """Render the conversation in `format` (a name in FORMATS, "template" for the tokenizer's own
    chat_template, or None for the tokenizer's default) and count its tokens per message.

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

    def text_of(k: int, prompt: bool) -> str:
        return render(template, messages[:k], add_generation_prompt=prompt, bos_token=bos, eos_token=eos)

    text = text_of(len(messages), add_generation_prompt)
    cuts = [0]
    for k in range(1, len(messages) + 1):
        prefix = text_of(k, False)
        if text.startswith(prefix) and len(prefix) >= cuts[-1]:
            cuts.append(len(prefix))
        else:  # the template moved text around: cut at the end of this message's content
            found = text.find(messages[k - 1].content, cuts[-1])
            cuts.append(found + len(messages[k - 1].content) if found >= 0 else cuts[-1])
    cuts.append(len(text))
    encoding = encoder.encode(text, allowed_special="all")
    starts = encoding.starts
    parts = []
    for k in range(len(messages) + 1):
        lo, hi = cuts[k], cuts[k + 1]
        if k == len(messages) and hi == lo:
            break
        first = int((starts < lo).sum()) if k else 0
        last = int((starts < hi).sum()) if k < len(messages) else len(starts)
        if k == len(messages):
            parts.append(ChatPart(-1, "", lo, hi, len(starts) - first, 0))
        else:
            m = messages[k]
            content = len(encoder.encode(m.content, allowed_special="none")) if m.content else 0
            parts.append(ChatPart(k, m.role, lo, hi, last - first, content))
    return ChatCount(name, text, encoding, tuple(parts))
