"""Chat templates counted exactly: the sequence is the rendered text tokenized with its special
tokens (checked against tiktoken itself), the parts add up, OpenAI's published counting rule holds
for the harmony format, and bad templates or conversations get one clear message."""

from __future__ import annotations

import json

import pytest
import tiktoken

from tokexplorer.cli.main import main
from tokexplorer.core.chat.conversation import (CHATML_TEMPLATE, Message, TemplateError, count_chat, parse_messages,
                                   render)
from tokexplorer.core.registry import get_builtin
from tokexplorer.core.tokenizer import TokexplorerError

CONVERSATION = [
    Message("system", "You are a helpful assistant. Answer in one line."),
    Message("user", "How many r's are in \"strawberry\"? 🍓"),
    Message("assistant", "Three."),
    Message("tool", '{"result": 3}'),
    Message("user", "    def f(x):\n        return x  # indentation"),
]


def library_encoding(name: str, extra: dict[str, int]) -> tiktoken.Encoding:
    """The built-in's own tiktoken Encoding, with the chat format's special tokens added."""
    base = get_builtin(name).tiktoken_encoding
    return tiktoken.Encoding(f"{name}_chat", pat_str=base._pat_str, mergeable_ranks=base._mergeable_ranks,
                             special_tokens={**base._special_tokens, **extra})


@pytest.mark.parametrize("name, extra", [
    ("cl100k_base", {"<|im_start|>": 100264, "<|im_end|>": 100265}),
    ("o200k_base", {"<|start|>": 200006, "<|end|>": 200007, "<|message|>": 200008}),
])
@pytest.mark.parametrize("prompt", [True, False])
def test_the_sequence_is_the_rendered_text_with_its_special_tokens(name, extra, prompt):
    count = count_chat(get_builtin(name), CONVERSATION, add_generation_prompt=prompt)
    assert count.encoding.ids == library_encoding(name, extra).encode(count.text, allowed_special="all")
    assert sum(p.tokens for p in count.parts) == count.total
    assert [p.role for p in count.parts if p.index >= 0] == [m.role for m in CONVERSATION]
    assert (count.parts[-1].index == -1) == prompt
    for m in CONVERSATION:
        assert m.content in count.text


def test_harmony_counts_follow_openais_rule_for_gpt4o():
    """OpenAI's cookbook: 3 tokens per message plus its role and content, 3 to prime the reply."""
    tok = get_builtin("o200k_base")
    count = count_chat(tok, CONVERSATION)
    expected = sum(3 + len(tok.encode(m.role)) + len(tok.encode(m.content)) for m in CONVERSATION) + 3
    assert count.total == expected
    assert count.overhead == expected - sum(len(tok.encode(m.content)) for m in CONVERSATION)


def test_chatml_on_cl100k_by_hand():
    count = count_chat(get_builtin("cl100k_base"), [Message("user", "Hello!")])
    assert count.text == "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"
    # <|im_start|> user \n Hello ! <|im_end|> \n | <|im_start|> assistant \n
    assert count.encoding.ids[0] == 100264 and count.encoding.ids[5] == 100265
    assert [p.tokens for p in count.parts] == [7, 3]
    assert count.overhead == 10 - 2


def test_a_template_that_renders_the_last_message_differently_still_adds_up():
    template = ("{% for m in messages %}[{{ m.role }}] {{ m.content }}"
                "{% if not loop.last %} | {% endif %}{% endfor %}")
    rendered = render(template, CONVERSATION[:2], add_generation_prompt=False)
    assert rendered.startswith("[system] You are")

    class WithTemplate:  # a tokenizer whose tokenizer_config.json has a chat_template
        def __init__(self, tok):
            self._tok, self.name, self.chat_template = tok, tok.name, template
            self.special_tokens = tok.special_tokens

        def encode(self, text, **kw):
            return self._tok.encode(text, **kw)

    count = count_chat(WithTemplate(get_builtin("gpt2")), CONVERSATION)
    assert count.format == "template"
    assert sum(p.tokens for p in count.parts) == count.total == len(get_builtin("gpt2").encode(count.text))


@pytest.mark.parametrize("template, message", [
    ("{% for m in messages %}{{ m.content }", "syntax error on line 1"),
    ("line one\n{{ raise_exception('only user and assistant roles') }}", "refused the conversation: only user"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}", "loops too long"),
    ("{{ messages[0].role }}\n{{ 1 / 0 }}", "failed on line 2: ZeroDivisionError"),
    ("{{ messages | no_such_filter }}", "syntax error on line 1: No filter named 'no_such_filter'"),
])
def test_a_bad_template_gets_one_clear_message(template, message):
    with pytest.raises(TemplateError, match=message):
        render(template, CONVERSATION, add_generation_prompt=True)


@pytest.mark.parametrize("data, message", [
    ("not json", "not valid JSON"), ('{"a": 1}', "expected a list"),
    ('[{"role": "user"}]', 'string "content"'), ('[{"role": "robot", "content": "x"}]', "role 'robot'"),
])
def test_a_bad_conversation_is_refused(data, message):
    with pytest.raises(TokexplorerError, match=message):
        parse_messages(data)


def test_a_tokenizer_without_a_chat_format_says_what_to_do():
    with pytest.raises(TokexplorerError, match="has no chat format"):
        count_chat(get_builtin("gpt2"), CONVERSATION)
    with pytest.raises(TokexplorerError, match="needs"):
        count_chat(get_builtin("gpt2"), CONVERSATION, format="chatml")


def test_cli_chat_json(tmp_path, capsys):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps({"messages": [{"role": m.role, "content": m.content} for m in CONVERSATION]}))
    assert main(["chat", "-t", "cl100k_base", "--file", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["format"] == "chatml" and out["total"] == len(out["ids"])
    assert sum(p["tokens"] for p in out["parts"]) == out["total"]
    assert out["text"] == render(CHATML_TEMPLATE, CONVERSATION, add_generation_prompt=True)
    assert main(["chat", "--file", str(path), "--no-generation-prompt", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == out["total"] - 3


def test_tekken_chats_equal_mistral_commons_own_encoder():
    """Test-only: mistral-common's encode_chat_completion is the reference for Tekken's format."""
    from mistral_common.protocol.instruct.messages import AssistantMessage, SystemMessage, UserMessage
    from mistral_common.protocol.instruct.request import ChatCompletionRequest
    from mistral_common.tokens.tokenizers.mistral import MistralTokenizer

    from tokexplorer.core.registry import TEKKEN

    kinds = {"system": SystemMessage, "user": UserMessage, "assistant": AssistantMessage}
    conversation = [m for m in CONVERSATION if m.role != "tool"]
    reference = MistralTokenizer.from_file(str(TEKKEN.location())).encode_chat_completion(
        ChatCompletionRequest(messages=[kinds[m.role](content=m.content) for m in conversation]))
    count = count_chat(get_builtin("tekken"), conversation)
    assert count.format == "mistral"
    assert count.encoding.ids == reference.tokens
    assert sum(p.tokens for p in count.parts) == count.total
    with pytest.raises(TemplateError, match="tool call id"):
        count_chat(get_builtin("tekken"), CONVERSATION)


def test_deepseek_v4_uses_its_own_format():
    count = count_chat(get_builtin("deepseek-v4"), [Message("system", "Be brief."), Message("user", "Hi")])
    assert count.text == "<｜begin▁of▁sentence｜>Be brief.<｜User｜>Hi<｜Assistant｜>"
    tok = get_builtin("deepseek-v4")
    assert count.encoding.ids[0] == tok.special_tokens["<｜begin▁of▁sentence｜>"]
    assert sum(p.tokens for p in count.parts) == count.total == 1 + 3 + 1 + 1 + 1


def test_a_tokenizer_config_chat_template_is_used(tmp_path):
    """A tokenizer.json with a tokenizer_config.json whose chat_template uses bos_token."""
    import shutil

    import tokenizers

    from tokexplorer.core.registry import DEEPSEEK_V4, load_tokenizer

    shutil.copy(DEEPSEEK_V4.location(), tmp_path / "tokenizer.json")
    template = ("{{ bos_token }}{% for m in messages %}<｜{{ m.role | capitalize }}｜>{{ m.content }}"
                "{% endfor %}{% if add_generation_prompt %}<｜Assistant｜>{% endif %}")
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({
        "bos_token": {"content": "<｜begin▁of▁sentence｜>"}, "eos_token": "<｜end▁of▁sentence｜>",
        "chat_template": template}), encoding="utf-8")
    tok = load_tokenizer(tmp_path / "tokenizer.json")
    count = count_chat(tok, [Message("user", "Hi"), Message("assistant", "Hello")])
    assert count.format == "template"
    assert count.text == "<｜begin▁of▁sentence｜><｜User｜>Hi<｜Assistant｜>Hello<｜Assistant｜>"
    reference = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert count.encoding.ids == reference.encode(count.text, add_special_tokens=False).ids
    assert sum(p.tokens for p in count.parts) == count.total
