"""Chat templates within budgets: each way of working for ever or filling memory that a hostile
template tried ends within a few seconds with one clear line; the template runs in a child that is
killed at its limits and ends with its parent; long conversations count in linear time, exactly
as the prefix-by-prefix rule does, and one over the budget is refused."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

from tokexplorer.core.chat.conversation import (CHATML_TEMPLATE, MAX_MESSAGES, Message, TemplateError, count_chat,
                                   render)
from tokexplorer.core.chat.process import TemplateRunner
from tokexplorer.core.chat.sandbox import render_layout
from tokexplorer.core.registry import get_builtin

HELLO = [Message("user", "hello")]
FEW_SECONDS = 15.0  # the 5 s limit, the kill 1 s later, a cold child's start on a loaded machine

ATTACKS = [
    # a million turns take 1-3 s, more on a loaded machine: then the 5 s limit speaks first
    ("{% set s = 'x' * 100000 %}{% for a in s %}{% for b in s %}{% endfor %}{% endfor %}",
     "loops too long|took longer than 5 s"),
    ("{% for a in messages[0].content * 20000 %}{% for b in messages[0].content * 20000 %}{{ '' }}"
     "{% endfor %}{% endfor %}", "loops too long|took longer than 5 s"),
    ("{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
     "loops too long|took longer than 5 s"),
    ("{{ 10 ** 1000000000 }}", r"10 \*\* 1,000,000,000 would have over"),
    ("{{ (10 ** 100) ** 100000 }}", "bits, over the template's limit"),
    ("{{ 'a' * 10**10 }}", "would be 10,000,000,000 long"),
    ("{{ [1] * 10**10 }}", "would be 10,000,000,000 long"),
    ("{{ 'a' | center(10**10) }}", "center's result"),
    ("{{ ('a\n' * 1000000) | indent(10000) }}", "indent's result"),
    ("{{ ('a' * 3000000) | wordwrap(1) }}", r"wordwrap\(1\)"),
    ("{{ ('a' * 1000000) | wordwrap(10, wrapstring='x' * 1000) }}", "wordwrap's result"),
    ("{{ range(10) | slice(10**10) | list }}", r"slice\(10,000,000,000\)"),
    ("{{ range(10**10) | list | length }}", "range of 10,000,000,000 numbers"),
    ("{{ messages | tojson(indent=10**9) }}", "tojson's indent"),
    ("{{ '%0999999999d' % 1 }}", "asks for a width of 999,999,999"),
    ("{{ '%*d' % (10**9, 1) }}", "format width of 1,000,000,000"),
    ("{{ '%0999999999d' | format(1) }}", "asks for a width of 999,999,999"),
    ("{{ '{:>999999999}'.format(1) }}", "format spec"),
    ("{{ 'a'.ljust(10**10) }}", r"str.ljust's result"),
    ("{{ 'a'.zfill(10**10) }}", r"str.zfill's result"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
     "a joined string would be"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = ns.s + ns.s %}{% endfor %}",
     "a joined string or list would be"),
    ("{% set ns = namespace(s='ab') %}{% for i in range(40) %}{% set ns.s = [ns.s, ns.s] | join %}"
     "{% endfor %}", "the joined text would be"),
    ("{{ ('a' * 100000) | replace('', 'b' * 100000) }}", "the replaced text would be"),
    ("{{ range(100000) | join('x' * 100000) }}", "the joined text would be"),
    ("{{ [1] | batch(10**10, 'x') | list }}", r"batch\(10,000,000,000\)"),
    ("{% for i in range(10) %}{{ 'x' * 9000000 }}{% endfor %}", "produced over 10,000,000 characters"),
]


@pytest.mark.parametrize("template, message", ATTACKS, ids=[f"attack{i}" for i in range(len(ATTACKS))])
def test_each_attack_ends_within_seconds_with_a_message(template, message):
    started = time.monotonic()
    with pytest.raises(TemplateError, match=message):
        render(template, HELLO, add_generation_prompt=True, keep_spare=True)
    assert time.monotonic() - started < FEW_SECONDS


def test_memory_past_the_limit_is_a_message_not_a_crash():
    """What the sandbox lets through (a list of 9 million items, about 100 MB: under its size
    bounds) meets the child's memory limit, RLIMIT_AS, on Linux."""
    if not sys.platform.startswith("linux"):
        pytest.skip("RLIMIT_AS is held on Linux only")
    template = "{% set a = (range(1000000) | list) * 9 %}{{ a | length }}"
    runner = TemplateRunner()
    assert runner.render(template, [], add_generation_prompt=False)[0] == "9000000"
    with pytest.raises(Exception, match="used more than 30 MB"):
        runner.render(template, [], add_generation_prompt=False, memory_mb=30)


def test_the_caller_kills_a_child_past_its_time():
    """A limit of 0.5 s: the sandbox's own deadline or the caller's kill, a message within 2 s."""
    runner = TemplateRunner()
    runner.render("warm", [], add_generation_prompt=False)  # a cold start is not the job's time
    macro = "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(30) }}"
    started = time.monotonic()
    with pytest.raises(Exception, match="took longer than 0.5 s"):
        runner.render(macro, [], add_generation_prompt=False, seconds=0.5)
    assert time.monotonic() - started < 2 + 10  # the child's start (cold: a new one) and 1.5 s


ORPHAN_PARENT = textwrap.dedent("""
    import sys
    from tokexplorer.core.chat.process import TemplateRunner

    if __name__ == "__main__":
        runner = TemplateRunner()
        template = sys.argv[1]
        print("rendering", flush=True)
        runner.render(template, [], add_generation_prompt=False, seconds=60)
""")


def _children_of(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("template", [
    # Python bytecode: the child's exit-with-parent thread gets its turn
    "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(60) }}",
    # one long C call holding the GIL (sorting 9 million items, over and over): RLIMIT_CPU ends it
    "{% set a = (range(1000000) | list) * 9 %}{% for i in range(1000) %}{{ a | sort | length }}{% endfor %}",
])
def test_the_child_ends_when_its_parent_is_killed(tmp_path, template):
    """A window killed while a template runs leaves no process behind (at 100 % CPU or at all)."""
    script = tmp_path / "parent.py"
    script.write_text(ORPHAN_PARENT)
    parent = subprocess.Popen([sys.executable, str(script), template], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "rendering"
        time.sleep(1.5)  # the child started and is rendering
        children = _children_of(parent.pid)
        assert children, "the template's child did not start"
    finally:
        parent.kill()
        parent.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(map(_running, children)):
        time.sleep(0.2)
    assert not any(map(_running, children)), "an orphan runs on"


def test_a_normal_template_counts_as_before():
    count = count_chat(get_builtin("cl100k_base"), [Message("user", "Hello!")])
    assert count.text == "<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"
    assert [p.tokens for p in count.parts] == [7, 3]


def prefix_by_prefix(template: str, messages: list[tuple[str, str]], prompt: bool) -> list[int]:
    """The rule as written: the first k messages rendered for each k (quadratic; the reference)."""
    def text_of(k, p):
        return render_layout(template, messages[:k], p, "", "", False, time.monotonic() + 60)[0]

    text = text_of(len(messages), prompt)
    cuts = [0]
    for k in range(1, len(messages) + 1):
        prefix = text_of(k, False)
        if text.startswith(prefix) and len(prefix) >= cuts[-1]:
            cuts.append(len(prefix))
        else:
            content = messages[k - 1][1]
            found = text.find(content, cuts[-1])
            cuts.append(found + len(content) if found >= 0 else cuts[-1])
    return cuts + [len(text)]


TEMPLATES = {
    "chatml": CHATML_TEMPLATE,
    "loop.last": "{% for m in messages %}[{{ m.role }}] {{ m.content }}{% if not loop.last %} | {% endif %}{% endfor %}",
    "system first": "{% if messages[0]['role'] == 'system' %}{% set sys = messages[0]['content'] %}"
                    "{% set rest = messages[1:] %}{% else %}{% set sys = '' %}{% set rest = messages %}{% endif %}"
                    "<<{{ sys }}>>{% for m in rest %}<{{ m.role }}>{{ m.content }}\n{% endfor %}"
                    "{% if add_generation_prompt %}<assistant>{% endif %}",
    "loop.length": "{% for m in messages %}{{ loop.index }}/{{ loop.length }} {{ m.content }}\n{% endfor %}",
    "trailer": "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}</s>",
}
# Not one part per message: a prefix ending in a system message ends with it, the whole does not.
MOVING = ("{% for m in messages %}{% if m.role == 'user' %}[INST]{{ m.content }}[/INST]"
          "{% elif m.role == 'assistant' %}{{ m.content }}</s>{% endif %}{% endfor %}"
          "{% if messages and messages[-1].role == 'system' %}{{ messages[-1].content }}{% endif %}")


@pytest.mark.parametrize("name", list(TEMPLATES))
@pytest.mark.parametrize("n", [5, 65, 130])
def test_cuts_read_from_one_render_equal_the_prefix_by_prefix_rule(name, n):
    roles = ["system", "user", "assistant", "user", "assistant", "tool"]
    messages = [(roles[i % len(roles)], f"message {i} " + "word " * (i % 7)) for i in range(n)]
    for prompt in (True, False):
        _, cuts = render_layout(TEMPLATES[name], messages, prompt, "", "", True, time.monotonic() + 60)
        assert cuts == prefix_by_prefix(TEMPLATES[name], messages, prompt)


@pytest.mark.parametrize("n", [5, 65, 130])
def test_a_template_that_moves_text_is_cut_by_the_rule_up_to_64_messages_then_at_contents(n):
    """Up to 64 messages the rule as written; past them, where the sampled prefixes show that the
    template does not append a part per message, each message's part ends with its content (the
    sampled ones by the rule)."""
    roles = ["system", "user", "assistant", "user", "assistant", "tool"]
    messages = [(roles[i % len(roles)], f"message {i} " + "word " * (i % 7)) for i in range(n)]
    text, cuts = render_layout(MOVING, messages, True, "", "", True, time.monotonic() + 60)
    reference = prefix_by_prefix(MOVING, messages, True)
    if n <= 64:
        assert cuts == reference
        return
    assert cuts[0] == 0 and cuts[-1] == len(text) and cuts == sorted(cuts)
    for k, (role, content) in enumerate(messages):
        if role in ("user", "assistant"):
            assert content in text[cuts[k]:cuts[k + 1]], k


def test_a_long_conversation_is_linear_and_one_over_the_budget_is_refused():
    tok = get_builtin("cl100k_base")
    count_chat(tok, HELLO, keep_spare=True)  # warm: a child waits ahead

    def seconds(n):
        messages = [Message("user" if i % 2 else "assistant", f"message number {i}") for i in range(n)]
        started = time.perf_counter()
        count = count_chat(tok, messages, keep_spare=True)
        assert sum(p.tokens for p in count.parts) == count.total and len(count.parts) == n + 1
        return time.perf_counter() - started

    small, large = seconds(1000), seconds(8000)
    assert large < 10  # was minutes (3,000 messages took 17 s)
    assert large < 8 * small * 3 + 1  # 8 times the messages: about 8 times the time, not 64
    too_many = [Message("user", "x")] * (MAX_MESSAGES + 1)
    with pytest.raises(TemplateError, match="over chat's budget of 10,000"):
        count_chat(tok, too_many)


def test_a_child_takes_jobs_in_turn_until_one_fails():
    """While the user types, one child renders count after count; a template that fails or goes
    over a limit ends its child, and the next count gets a fresh one."""
    runner = TemplateRunner(keep_spare=True)
    try:
        for _ in range(3):
            assert runner.render(CHATML_TEMPLATE, [("user", "hi")], add_generation_prompt=False)[0] \
                == "<|im_start|>user\nhi<|im_end|>\n"
        first = runner._spare.process.pid
        assert runner.render(CHATML_TEMPLATE, [("user", "hi")], add_generation_prompt=False)
        assert runner._spare.process.pid == first  # the same child, given back
        with pytest.raises(Exception, match="would be 10,000,000,000 long"):
            runner.render("{{ 'a' * 10**10 }}", [], add_generation_prompt=False)
        assert runner._spare.process.pid != first
        assert runner.render("{{ messages | length }}", [("user", "hi")], add_generation_prompt=False)[0] == "1"
    finally:
        runner.close()
