"""`tokexplorer chat`: the exact text and tokens a chat conversation sends, per message."""

from __future__ import annotations

import argparse
import sys

from tokexplorer.cli.arguments import add_tokenizer_argument, read_text_argument
from tokexplorer.cli.output import print_json, print_table
from tokexplorer.core.analysis.unicode_info import visible
from tokexplorer.core.chat.conversation import FORMATS, count_chat, parse_messages
from tokexplorer.core.registry import load_tokenizer
from tokexplorer.core.tokenizer import TokexplorerError


def add_parsers(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "chat", help="a conversation as the model receives it: text, tokens, per-message counts",
        description="Render a conversation (JSON: [{\"role\": \"user\", \"content\": \"…\"}, …]) with "
        "the tokenizer's chat template or a named format, and count its tokens per message and the "
        "template's overhead.")
    add_tokenizer_argument(p)
    p.add_argument("messages", nargs="?", help="the conversation as JSON; '-' reads stdin")
    p.add_argument("--file", "-f", metavar="PATH", help="read the conversation from a JSON file")
    p.add_argument("--encoding", help=argparse.SUPPRESS)
    p.add_argument("--format", choices=[*FORMATS, "template"],
                   help="the chat format (default: the tokenizer's own template or format)")
    p.add_argument("--no-generation-prompt", action="store_true",
                   help="do not end with the assistant's header (the prompt for the reply)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(handler=run)


def summary(total: int, overhead: int) -> str:
    """The closing line's counts. The template's share is the total less the messages' contents
    encoded alone, and it is below 0 when contents take more tokens alone than in the conversation
    (a token of the template's text and the content's merged): then that is what it says.

    >>> summary(10, 4)
    "10 tokens, 4 of them the template's (special tokens, roles, separators)"
    >>> summary(10, -2)
    "10 tokens; the messages' contents encoded alone take 2 more than that (the template's text and theirs share tokens)"
    """
    if overhead >= 0:
        return f"{total} tokens, {overhead} of them the template's (special tokens, roles, separators)"
    return (f"{total} tokens; the messages' contents encoded alone take {-overhead} more than that "
            "(the template's text and theirs share tokens)")


def run(args: argparse.Namespace) -> int:
    args.text = args.messages
    source = args.file or "the conversation"
    try:
        messages = parse_messages(read_text_argument(args), source)
    except RecursionError:  # Python's JSON parser recurses once a level
        raise TokexplorerError(f"{source} is not valid JSON here: it is nested too deeply (a "
                               "conversation is a list of messages, two levels)") from None
    tok = load_tokenizer(args.tokenizer)
    count = count_chat(tok, messages, format=args.format, add_generation_prompt=not args.no_generation_prompt)
    if args.json:
        print_json({"tokenizer": tok.name, "format": count.format, "text": count.text,
                    "ids": [int(i) for i in count.encoding.ids],  # a list or an array (`TokenIds`)
                    "total": count.total, "overhead": count.overhead,
                    "parts": [{"index": p.index, "role": p.role or None, "start": p.start, "end": p.end,
                               "tokens": p.tokens, "content_tokens": p.content_tokens}
                              for p in count.parts]})
        return 0
    print(visible(count.text).replace("\\n", "\\n\n"))
    print()
    print_table(["#", "role", "tokens", "content", "template"],
                [[p.index if p.index >= 0 else "", p.role or "(reply prompt)", p.tokens, p.content_tokens,
                  p.tokens - p.content_tokens] for p in count.parts], right={0, 2, 3, 4})
    print(f"{tok.name}, {count.format}: {summary(count.total, count.overhead)}", file=sys.stderr)
    return 0
