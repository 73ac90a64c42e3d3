"""A Jinja sandbox that bounds work as well as access: what the chat template process runs.

Jinja's `SandboxedEnvironment` stops a template from reaching Python's internals, not from
working for ever or filling memory: `10**10**9`, `'a' * 10**10`, `'%0999999999d' % 1`,
`'' | center(10**9)`, an exponential macro, nested loops over a long string. This environment
refuses those before they start, with a message:

- every turn of every `{% for %}` loop and every call (macros, filters called as functions,
  methods) is a step; a render may take `MAX_STEPS`, and checks its deadline at each one;
- the operators Jinja lets a sandbox intercept (`call_binop`, as its documentation shows) are
  checked for the size of what they would build: a string or list longer than `MAX_SIZE`, an
  integer of more than `MAX_INT_BITS` bits; `~` (concatenation, which Jinja does not let a sandbox
  intercept) is rewritten in the template's tree into a checked join;
- the filters and string methods that build text from a number (`center`, `indent`, `wordwrap`,
  `format`, `tojson(indent=…)`, `slice`, `batch`, `join`, `replace`, `ljust`, `zfill`, …) check
  that number first; `range` is a real range of at most `MAX_STEPS` numbers.

These fail fast with a clear message; the process the template runs in (`core.chat.process`) is the
bound for whatever they miss (its time and memory limits). No Qt, no tokenizer here: the child
process imports only this and Jinja.

It runs past 400 lines because each bounded operator, filter and method is a small function of its
own; together they are the list of what a template may do.
"""

from __future__ import annotations

import json
import re
import string
import time
from typing import Any, Sequence

MAX_STEPS = 1_000_000  # loop turns and calls a template may take in one render, all together
MAX_SIZE = 10_000_000  # characters (or items) any string or list a template builds may hold
MAX_OUTPUT = MAX_SIZE  # characters a template may produce
MAX_INT_BITS = 100_000  # an integer a template computes (about 30,000 digits)
MAX_JSON_INDENT = 64
MAX_SECONDS = 5.0
# subtle: textwrap slices a long word once per line it gives, so a word of n characters wrapped at
# width w copies about n²/2w characters; refused above this many.
MAX_WRAP_WORK = 50_000_000


class TemplateLimit(Exception):
    """A template that went over a budget; the message says which (the caller words the rest)."""


class TemplateRefused(Exception):
    """The template called raise_exception: it refuses the conversation."""


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _size_of(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, list, tuple)) else None


def _too_big(what: str, size: int) -> TemplateLimit:
    return TemplateLimit(f"{what} would be {size:,} long, over the template's limit of {MAX_SIZE:,}")


def _check_size(what: str, size: int) -> None:
    if size > MAX_SIZE:
        raise _too_big(what, size)


_PERCENT_SPEC = re.compile(r"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?")
_FORMAT_NUMBER = re.compile(r"\d+")


def _check_percent(fmt: str, args: Any) -> None:
    """`fmt % args` is refused if a width or precision (written, or `*` from the args) is over
    MAX_SIZE: '%0999999999d' % 1 would build a gigabyte."""
    star = False
    for m in _PERCENT_SPEC.finditer(fmt):
        for number in m.groups():
            if number == "*":
                star = True
            elif number is not None and int(number) > MAX_SIZE:
                raise TemplateLimit(f"the format {m.group(0)[:20]!r} asks for a width of {int(number):,}, over "
                                    f"the template's limit of {MAX_SIZE:,}")
    if star:
        for value in args if isinstance(args, tuple) else (args,):
            if _int(value) is not None and abs(value) > MAX_SIZE:
                raise TemplateLimit(f"a format width of {value:,} is over the template's limit of {MAX_SIZE:,}")
    if len(fmt) > MAX_SIZE:
        raise _too_big("the format", len(fmt))


def _check_format_spec(fmt: str, args: Sequence, kwargs: dict) -> None:
    """str.format: widths in the format specs, nested ones from the arguments."""
    nested = False
    try:
        fields = list(string.Formatter().parse(fmt))
    except ValueError:
        return  # str.format itself says what is wrong
    for _, _, spec, _ in fields:
        if spec:
            nested = nested or "{" in spec
            for number in _FORMAT_NUMBER.findall(spec):
                if len(number) > 9 or int(number) > MAX_SIZE:
                    raise TemplateLimit(f"the format spec {spec[:20]!r} asks for {number[:12]}, over the "
                                        f"template's limit of {MAX_SIZE:,}")
    if nested:
        for value in (*args, *kwargs.values()):
            if _int(value) is not None and abs(value) > MAX_SIZE:
                raise TemplateLimit(f"a format width of {value:,} is over the template's limit of {MAX_SIZE:,}")


def _check_str_method(obj: str, name: str, args: tuple, kwargs: dict) -> None:
    """The str methods whose result grows with an argument, checked before they run."""
    if name in ("center", "ljust", "rjust", "zfill"):
        width = args[0] if args else kwargs.get("width")
        if _int(width) is not None:
            _check_size(f"str.{name}'s result", width)
    elif name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if _int(size) is not None:
            _check_size("str.expandtabs's result", len(obj) + obj.count("\t") * max(size, 0))
    elif name == "replace" and len(args) >= 2 and isinstance(args[0], str) and isinstance(args[1], str):
        _check_replace(obj, args[0], args[1], args[2] if len(args) > 2 else kwargs.get("count", -1))
    elif name == "join" and args:
        _check_join(obj, args[0])


def _check_replace(s: str, old: str, new: str, count: Any) -> None:
    if len(new) <= len(old):
        return
    times = s.count(old) if old else len(s) + 1
    if _int(count) is not None and count >= 0:
        times = min(times, count)
    _check_size("the replaced text", len(s) + times * (len(new) - len(old)))


def _check_join(separator: Any, items: Any) -> None:
    if isinstance(separator, str) and isinstance(items, (list, tuple)) and len(items) > 1:
        _check_size("the joined text", len(separator) * (len(items) - 1)
                    + sum(len(i) if isinstance(i, str) else 0 for i in items))


def _check_binop(operator: str, left: Any, right: Any) -> None:
    if operator == "**":
        base, exponent = _int(left), _int(right)
        if base is not None and exponent is not None and exponent > 0 and abs(base) > 1:
            bits = (abs(base).bit_length() - 1) * exponent
            if bits > MAX_INT_BITS:
                raise TemplateLimit(f"{base if base < 10**12 else 'a number'} ** {exponent:,} would have "
                                    f"over {bits:,} bits, over the template's limit of {MAX_INT_BITS:,}")
    elif operator == "*":
        for seq, times in ((left, right), (right, left)):
            size, n = _size_of(seq), _int(times)
            if size is not None and n is not None:
                _check_size("a repeated string or list", size * n)
        a, b = _int(left), _int(right)
        if a is not None and b is not None and a.bit_length() + b.bit_length() > MAX_INT_BITS:
            raise TemplateLimit(f"a product of over {MAX_INT_BITS:,} bits is over the template's limit")
    elif operator == "+":
        a, b = _size_of(left), _size_of(right)
        if a is not None and b is not None:
            _check_size("a joined string or list", a + b)
    elif operator == "%" and isinstance(left, str):
        _check_percent(left, right)


def _environment(deadline: float, seconds: float = MAX_SECONDS):
    """A fresh bounded environment (its step count is its own) whose renders stop at `deadline`
    (time.monotonic)."""
    import jinja2
    from jinja2 import nodes
    from jinja2.filters import FILTERS
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from jinja2.visitor import NodeTransformer

    steps = [0]

    def step() -> None:
        steps[0] += 1
        if steps[0] > MAX_STEPS:
            raise TemplateLimit(f"the chat template loops too long (over {MAX_STEPS:,} loop turns and calls)")
        if time.monotonic() > deadline:
            raise TemplateLimit(f"the chat template took longer than {seconds:g} s")

    class BoundedSandbox(ImmutableSandboxedEnvironment):
        intercepted_binops = frozenset({"**", "*", "+", "%"})
        intercepted_unops = frozenset({"-", "+"})

        def call_binop(self, context, operator, left, right):
            _check_binop(operator, left, right)
            return super().call_binop(context, operator, left, right)

        def call_unop(self, context, operator, arg):  # cheap on any value; counted as a step
            step()
            return super().call_unop(context, operator, arg)

        def call(__self, __context, __obj, *args, **kwargs):  # noqa: N805 - Jinja's own names
            step()
            owner = getattr(__obj, "__self__", None)
            if isinstance(owner, str):
                _check_str_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
            return super().call(__context, __obj, *args, **kwargs)

        def wrap_str_format(self, value):
            wrapped = super().wrap_str_format(value)
            if wrapped is None:
                return None
            fmt = value.__self__

            def checked(*args, **kwargs):
                if value.__name__ == "format_map":
                    _check_format_spec(fmt, (), args[0] if args and isinstance(args[0], dict) else {})
                else:
                    _check_format_spec(fmt, args, kwargs)
                return wrapped(*args, **kwargs)

            return checked

    class Counted(NodeTransformer):
        """Every loop's iterable through the counting filter, every `~` through the checked join."""

        def visit_For(self, node):
            self.generic_visit(node)
            node.iter = nodes.Filter(node.iter, "_counted", [], [], None, None, lineno=node.lineno)
            return node

        def visit_Concat(self, node):
            self.generic_visit(node)
            return nodes.Filter(nodes.List(node.nodes, lineno=node.lineno), "_concat", [], [], None, None,
                                lineno=node.lineno)

    def counted(iterable):
        for value in iterable:
            step()
            env.on_item(value)
            yield value

    def concat(pieces):
        pieces = [str(p) for p in pieces]
        _check_size("a joined string", sum(map(len, pieces)))
        return "".join(pieces)

    def bounded_range(*args):
        r = range(*args)
        if len(r) > MAX_STEPS:
            raise TemplateLimit(f"range of {len(r):,} numbers is over the template's limit of {MAX_STEPS:,}")
        return r

    def raise_exception(message):
        raise TemplateRefused(str(message))

    def center(value, width=80):
        if _int(width) is not None:
            _check_size("center's result", max(width, len(str(value))))
        return FILTERS["center"](value, width)

    def indent(s, width=4, first=False, blank=False):
        prefix = width if isinstance(width, str) else " " * min(max(_int(width) or 0, 0), MAX_SIZE + 1)
        _check_size("indent's result", len(str(s)) + (str(s).count("\n") + 1) * len(prefix))
        return FILTERS["indent"](s, width, first, blank)

    @jinja2.pass_environment
    def wordwrap(environment, s, width=79, break_long_words=True, wrapstring=None, break_on_hyphens=True):
        text, w = str(s), max(_int(width) or 1, 1)
        lines = len(text) // w + text.count("\n") + 1
        _check_size("wordwrap's result", len(text) + lines * len(wrapstring or environment.newline_sequence))
        longest = max(map(len, text.split()), default=0)
        if break_long_words and longest * (longest // w) > MAX_WRAP_WORK:
            raise TemplateLimit(f"wordwrap({w}) of a {longest:,}-character word is over the template's limit")
        return FILTERS["wordwrap"](environment, s, width, break_long_words, wrapstring, break_on_hyphens)

    def format_filter(value, *args, **kwargs):
        _check_percent(str(value), kwargs or args)
        return FILTERS["format"](value, *args, **kwargs)

    def tojson(value, indent=None):
        if (_int(indent) is not None and indent > MAX_JSON_INDENT) or (
                isinstance(indent, str) and len(indent) > MAX_JSON_INDENT):
            raise TemplateLimit(f"tojson's indent is over the template's limit of {MAX_JSON_INDENT}")
        text = json.dumps(value, ensure_ascii=False, indent=indent)
        _check_size("tojson's result", len(text))
        return text

    @jinja2.pass_eval_context
    def slice_filter(eval_ctx, value, slices, fill_with=None):
        if _int(slices) is not None and slices > MAX_STEPS:
            raise TemplateLimit(f"slice({slices:,}) is over the template's limit of {MAX_STEPS:,} slices")
        return FILTERS["slice"](eval_ctx, value, slices, fill_with)

    def batch(value, linecount, fill_with=None):
        if _int(linecount) is not None and linecount > MAX_STEPS:
            raise TemplateLimit(f"batch({linecount:,}) is over the template's limit of {MAX_STEPS:,}")
        return FILTERS["batch"](value, linecount, fill_with)

    @jinja2.pass_eval_context
    def join(eval_ctx, value, d="", attribute=None):
        if not isinstance(value, (str, dict)):
            value = list(value)  # a range or a generator: its items, to measure
            _check_join(d, [item if isinstance(item, str) else "" for item in value])
        return FILTERS["join"](eval_ctx, value, d, attribute)

    @jinja2.pass_eval_context
    def replace(eval_ctx, s, old, new, count=None):
        if isinstance(s, str) and isinstance(old, str) and isinstance(new, str):
            _check_replace(s, old, new, count if count is not None else -1)
        return FILTERS["replace"](eval_ctx, s, old, new, count)

    class Environment(BoundedSandbox):
        def parse_bounded(self, source: str):
            """The template's tree, its loops counted and its joins checked."""
            return Counted().visit(self.parse(source))

    env = Environment(trim_blocks=True, lstrip_blocks=True)
    env.on_item = lambda value: None
    env.position = 0

    def reset() -> None:
        steps[0] = 0

    env.reset = reset
    env.globals.update(range=bounded_range, raise_exception=raise_exception)
    env.filters.update(_counted=counted, _concat=concat, center=center, indent=indent, wordwrap=wordwrap,
                       format=format_filter, tojson=tojson, slice=slice_filter, batch=batch, join=join,
                       replace=replace)
    return env


def compile_template(source: str, deadline: float, seconds: float = MAX_SECONDS):
    """(environment, compiled template); jinja2.TemplateSyntaxError if it does not parse."""
    env = _environment(deadline, seconds)
    return env, env.from_string(env.parse_bounded(source))


def generate(env, compiled, context: dict) -> str:
    """The rendered text, at most MAX_OUTPUT characters; `env.position` follows the characters
    produced so far (what a loop's `env.on_item` reads as the place it has reached)."""
    out, size = [], 0
    env.position = 0
    for piece in compiled.generate(**context):
        out.append(piece)
        size += len(piece)
        if size > MAX_OUTPUT:
            raise TemplateLimit(f"the chat template produced over {MAX_OUTPUT:,} characters")
        env.position = size
    return "".join(out)


# --- a conversation's text and the place each message's part ends -------------------------------

EXACT_MESSAGES = 64  # up to this many messages every prefix is rendered (the rule read as written)
FIND_WINDOW = 65_536  # characters past the previous part searched for a message's content


def template_error_line(exc: BaseException) -> str:
    """' on line N' from the traceback frames Jinja maps to template lines, if any."""
    tb, line = exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == "<template>":
            line = tb.tb_lineno
        tb = tb.tb_next
    return f" on line {line}" if line else ""


def render_layout(template: str, messages: Sequence[tuple[str, str]], add_generation_prompt: bool,
                  bos_token: str, eos_token: str, with_cuts: bool, deadline: float,
                  seconds: float = MAX_SECONDS) -> tuple[str, list[int] | None]:
    """The rendered conversation and, with `with_cuts`, the n + 2 cuts that split it into the
    messages' parts and the reply prompt's (`core.chat.conversation` says the rule); TemplateLimit,
    TemplateRefused or Jinja's and Python's own errors when the template fails.

    The rule renders the first k messages for each k. Done as written that is n renders of up to n
    messages; past EXACT_MESSAGES it is done in a linear number of steps: one render of the whole
    conversation without the reply prompt notes where the template's loop had reached when it took
    each message (the output so far); where the prefix renders of a few sampled k (first, last,
    spread between) equal those places, the template is one that appends a part per message, and the
    places are the prefixes' ends for every k. Otherwise each unsampled k is cut at the end of its
    content, as the rule does for a prefix that is not the start of the whole text.
    """
    env, compiled = compile_template(template, deadline, seconds)
    dicts = [{"role": role, "content": content} for role, content in messages]
    n = len(dicts)

    def render(k: int, prompt: bool) -> str:
        env.reset()
        return generate(env, compiled, {"messages": dicts[:k], "add_generation_prompt": prompt,
                                        "bos_token": bos_token, "eos_token": eos_token})

    if not with_cuts:
        return render(n, add_generation_prompt), None
    index = {id(d): i for i, d in enumerate(dicts)}
    reached: dict[int, int] = {}

    def on_item(value) -> None:
        i = index.get(id(value))
        if i is not None:
            reached[i] = env.position

    if add_generation_prompt:
        text = render(n, True)
    env.on_item = on_item
    whole = render(n, False)  # the prefix of all n messages
    env.on_item = lambda value: None
    if not add_generation_prompt:
        text = whole

    prefix_end: dict[int, int | None] = {}  # k -> the length of the first k's render, if it starts `text`

    def exact(k: int) -> str:
        prefix = whole if k == n else render(k, False)
        prefix_end[k] = len(prefix) if text.startswith(prefix) else None
        return prefix

    if n <= EXACT_MESSAGES:
        for k in range(1, n + 1):
            exact(k)
    else:
        samples = sorted({1, 2, 3, n - 1, *(n * i // 6 for i in range(1, 6))})
        places = {k: reached.get(k) for k in range(1, n)}
        appends = True
        for k in samples:
            prefix = exact(k)
            appends = appends and places[k] is not None and prefix == whole[:places[k]]
        exact(n)
        if appends:
            common = _common_prefix(text, whole)
            for k in range(1, n):
                prefix_end[k] = places[k] if places[k] <= common else None
    cuts = [0]
    for k in range(1, n + 1):
        end = prefix_end.get(k)
        if end is not None and end >= cuts[-1]:
            cuts.append(end)
        else:  # the template moved text around: cut at the end of this message's content
            content = dicts[k - 1]["content"]
            found = text.find(content, cuts[-1], cuts[-1] + len(content) + FIND_WINDOW)
            cuts.append(found + len(content) if found >= 0 else cuts[-1])
    cuts.append(len(text))
    return text, cuts


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of a and b (by halves: C speed, no per-character loop)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
