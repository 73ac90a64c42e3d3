"""Chat templates within budgets: each way of working for ever or filling memory that a hostile
template tried ends within a few seconds with one clear line; the template runs in a child that is
killed at its limits and ends with its parent; long conversations count in linear time, exactly
as the prefix-by-prefix rule does, and one over the budget is refused. The limits by platform
(core/chat/limits.py): the rlimits set on Linux, the guard that holds memory where the OS does not
(run here for real with the OS's limit left unset), and the Windows job's structures laid out as
winnt.h lays them out on x64 (checked byte by byte; the job itself runs on Windows only)."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import textwrap
import time

import pytest

from tokexplorer.core.chat.conversation import (CHATML_TEMPLATE, MAX_MESSAGES, Message, TemplateError, count_chat,
                                   render)
from tokexplorer.core.chat import limits
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
    ("{{ 10 ** 5000 }}", r"prints a number of over 4,300 digits, more than a number may have as text$"),
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


# --- the limits by platform (core/chat/limits.py) ------------------------------------------------

def test_memory_past_the_limit_is_the_guards_where_the_os_holds_none():
    """macOS holds no RLIMIT_AS: there the caller's guard reads the child's resident memory and
    kills it past the limit. Run here with the OS's memory limit left unset (os_memory=False)."""
    if limits.resident_bytes(os.getpid()) is None:
        pytest.skip("no way to read a process's resident memory here")
    template = "{% set a = (range(1000000) | list) * 9 %}{{ a | length }}"
    runner = TemplateRunner(os_memory=False)
    assert runner.render(template, [], add_generation_prompt=False)[0] == "9000000"
    started = time.monotonic()
    with pytest.raises(Exception, match="^the chat template used more than 30 MB$"):
        runner.render(template, [], add_generation_prompt=False, memory_mb=30)
    assert time.monotonic() - started < FEW_SECONDS


GROWER = textwrap.dedent("""
    import sys, time
    hoard = []
    print("started", flush=True)
    for _ in range(60):  # 10 MB every 20 ms, up to 600 MB, then waits without answering
        hoard.append(b"x" * (10 * 1024 * 1024))  # written, so resident
        time.sleep(0.02)
    time.sleep(60)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_guard_says_memory_once_a_process_grows_past_its_limit(tmp_path):
    """The guard on its own, against a real process that grows and never answers: 'memory' soon
    after it passes 50 MB more than it had, long before the time limit; without a guard, 'time'."""
    import multiprocessing

    script = tmp_path / "grower.py"
    script.write_text(GROWER)
    ours, theirs = multiprocessing.Pipe()
    for guard_mb, expected in ((50, "memory"), (None, "time")):
        grower = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
        try:
            assert grower.stdout.readline().strip() == "started"
            started = time.monotonic()
            assert limits.wait_for_answer(ours, grower.pid, 3.0, guard_mb) == expected
            took = time.monotonic() - started
            if expected == "memory":
                assert took < 2.0
                assert limits.resident_bytes(grower.pid) < 600 * 1024 * 1024  # stopped before its end
            else:
                assert took >= 3.0
        finally:
            grower.kill()
            grower.wait()


CHILD_LIMITS = textwrap.dedent("""
    import resource, sys
    from tokexplorer.core.chat import limits

    before = resource.getrlimit(resource.RLIMIT_AS)[0]
    caps = limits.ChildLimits(os_memory=sys.argv[1] == "os")
    start = limits._linux_vm_size()
    caps.set(5.0, 100)
    used = resource.getrusage(resource.RUSAGE_SELF)
    print(caps.holds_memory, caps._job is None, before, start, resource.getrlimit(resource.RLIMIT_AS)[0],
          resource.getrlimit(resource.RLIMIT_CPU)[0], used.ru_utime + used.ru_stime)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux's limits")
def test_on_linux_the_child_sets_rlimits_and_no_job(tmp_path):
    """The Linux path: RLIMIT_AS at the child's start plus the job's memory, RLIMIT_CPU at the CPU
    time used plus the job's seconds (and 2 for rounding), no Windows job; without the OS's memory
    limit, RLIMIT_AS stays as it was."""
    script = tmp_path / "child_limits.py"
    script.write_text(CHILD_LIMITS)
    out = subprocess.run([sys.executable, str(script), "os"], capture_output=True, text=True, check=True)
    holds, no_job, _, start, address_space, cpu, used = out.stdout.split()
    assert (holds, no_job) == ("True", "True")
    assert int(address_space) == int(start) + 100 * 1024 * 1024
    assert int(cpu) == int(float(used) + 5.0) + 2
    out = subprocess.run([sys.executable, str(script), "guard"], capture_output=True, text=True, check=True)
    holds, no_job, before, _, address_space, _, _ = out.stdout.split()
    assert (holds, no_job) == ("False", "True")
    assert address_space == before


def test_the_windows_job_is_chosen_on_win32_only():
    assert [limits.memory_cap(p) for p in ("linux", "win32", "darwin", "freebsd14")] == \
        ["rlimit", "job", "guard", "guard"]
    assert [limits.cpu_cap(p) for p in ("linux", "win32", "darwin")] == ["rlimit", "job", "rlimit"]
    assert limits.memory_cap() == ("job" if sys.platform == "win32" else limits.memory_cap(sys.platform))


@pytest.mark.skipif(ctypes.sizeof(ctypes.c_void_p) != 8, reason="the 64-bit layout")
def test_the_windows_structures_have_their_documented_64_bit_layout():
    """Sizes and offsets of winnt.h's structures on x64 (as Windows' own headers lay them out):
    JOBOBJECT_BASIC_LIMIT_INFORMATION 0x40, IO_COUNTERS 0x30, JOBOBJECT_EXTENDED_LIMIT_INFORMATION
    0x90 with ProcessMemoryLimit at 0x70, PROCESS_MEMORY_COUNTERS_EX 80; macOS's proc_taskinfo 96."""
    basic = limits.JOBOBJECT_BASIC_LIMIT_INFORMATION
    assert ctypes.sizeof(basic) == 0x40
    assert {name: getattr(basic, name).offset for name, _ in basic._fields_} == {
        "PerProcessUserTimeLimit": 0x00, "PerJobUserTimeLimit": 0x08, "LimitFlags": 0x10,
        "MinimumWorkingSetSize": 0x18, "MaximumWorkingSetSize": 0x20, "ActiveProcessLimit": 0x28,
        "Affinity": 0x30, "PriorityClass": 0x38, "SchedulingClass": 0x3C}
    assert ctypes.sizeof(limits.IO_COUNTERS) == 0x30
    extended = limits.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
    assert ctypes.sizeof(extended) == 0x90
    assert {name: getattr(extended, name).offset for name, _ in extended._fields_} == {
        "BasicLimitInformation": 0x00, "IoInfo": 0x40, "ProcessMemoryLimit": 0x70, "JobMemoryLimit": 0x78,
        "PeakProcessMemoryUsed": 0x80, "PeakJobMemoryUsed": 0x88}
    counters = limits.PROCESS_MEMORY_COUNTERS_EX
    assert ctypes.sizeof(counters) == 80
    assert (counters.WorkingSetSize.offset, counters.PrivateUsage.offset) == (16, 72)
    assert ctypes.sizeof(limits.proc_taskinfo) == 96 and limits.proc_taskinfo.pti_resident_size.offset == 8


def test_the_jobs_limits_are_where_windows_reads_them():
    """What SetInformationJobObject receives, byte by byte: 7.5 s of user time in 100 ns ticks at
    offset 0, the flags PROCESS_TIME | PROCESS_MEMORY at 0x10, the commit limit at 0x70."""
    if ctypes.sizeof(ctypes.c_void_p) != 8:
        pytest.skip("the 64-bit layout")
    data = bytes(limits.job_limits(7.5, 600 * 1024 * 1024))
    assert int.from_bytes(data[0x00:0x08], "little", signed=True) == 75_000_000
    assert int.from_bytes(data[0x10:0x14], "little") == 0x0002 | 0x0100
    assert int.from_bytes(data[0x70:0x78], "little") == 600 * 1024 * 1024
    no_memory = bytes(limits.job_limits(1.0, None))
    assert int.from_bytes(no_memory[0x10:0x14], "little") == 0x0002
    assert int.from_bytes(no_memory[0x70:0x78], "little") == 0


def test_a_child_ended_by_its_limits_is_said_in_one_line():
    """How a child that went without an answer is explained, by its exit code: SIGXCPU (Linux,
    macOS) and the Windows job's end (ERROR_NOT_ENOUGH_QUOTA) are the CPU-time limit."""
    import signal

    from tokexplorer.core.chat.process import _ended

    assert _ended(1816, 5, 512) == "the chat template took longer than 5 s (CPU time)"
    if hasattr(signal, "SIGXCPU"):
        assert _ended(-signal.SIGXCPU, 5, 512) == "the chat template took longer than 5 s (CPU time)"
    assert _ended(3, 5, 512) == "the chat template's process ended (exit code 3)"
