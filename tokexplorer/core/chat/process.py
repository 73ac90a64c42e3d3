"""Chat templates rendered in a short-lived process of their own, with hard limits: what the
command line's `chat` and the tokenizing server's `CountChat` both use.

A template is code from a file the user opened. The bounded sandbox (`core.chat.sandbox`) refuses
the usual ways of working for ever or filling memory; this is the bound for whatever it misses: a
child process (multiprocessing's `spawn`: the same on Linux, macOS and Windows) renders one
conversation and ends. The caller waits at most MAX_SECONDS plus a grace for the child's start,
then kills it: the caller never hangs, whatever the template does, with the GIL held or not.

Limits (`core.chat.limits`: which platform holds which, and how):
- wall time: the caller kills the child at the limit, everywhere;
- CPU time: RLIMIT_CPU (Linux, macOS), a Job object's user-time limit (Windows), so a child whose
  caller died hard (the window killed while a template ran) ends by itself a few seconds later even
  inside one long C call, where the thread of `child_process.exit_with_parent` cannot run;
- memory: MAX_MEMORY_MB above what the child holds when it starts, held by the OS on Linux
  (RLIMIT_AS) and Windows (the Job object's commit limit): an allocation past it fails. macOS's
  kernel does not hold RLIMIT_AS; there (and on a Windows that refuses the job) the caller's guard
  reads the child's resident memory while it waits and kills it past the limit. Either way the
  message is the same: "the chat template used more than N MB".

To answer quickly while the user types, a child is started ahead and waits for its job (a spare,
idle, ended with its parent), and a child takes a few hundred jobs in turn before it ends
(`JOBS_PER_CHILD`, `LIFE_SECONDS`, `GROWTH_MB`); one that fails or goes over a limit ends at once,
and a fresh one is started. Each render builds a fresh Jinja environment: nothing passes between
jobs but the process.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
import time
from typing import Sequence

from tokexplorer.core.chat import limits
from tokexplorer.core.chat.sandbox import MAX_SECONDS

MAX_MEMORY_MB = 512  # what a template may take on top of the child's own start
START_GRACE = 10.0  # seconds a cold child may take to start (imports) before its job's clock runs
# A child answers jobs one after another (a count while typing then costs a render, not a process
# start: under load a start took a second) until a job fails or goes over a limit, or until these:
JOBS_PER_CHILD = 200
LIFE_SECONDS = 120.0
GROWTH_MB = 64  # resident memory past its start


class TemplateProcessError(Exception):
    """The template failed or went over a limit: the message says so, in one line."""


def _child(conn, os_memory: bool = True) -> None:
    """The child's entry point: answer jobs until one fails or goes over a limit, or the child has
    served JOBS_PER_CHILD jobs, lived LIFE_SECONDS or grown by GROWTH_MB; then end. Its first
    word says whether the OS holds its memory limit (else the caller's guard does)."""
    from tokexplorer.core.child_process import exit_with_parent

    exit_with_parent()
    import jinja2  # noqa: F401 - imported before the clock and the limits start

    from tokexplorer.core.chat import sandbox as chat_sandbox  # noqa: F401

    caps = limits.ChildLimits(os_memory=os_memory)
    start_rss = limits.resident_bytes(os.getpid())
    born, served = time.monotonic(), 0
    try:
        conn.send(("ready", caps.holds_memory))
    except (EOFError, OSError):
        return
    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        *job, memory_mb = job
        caps.set(job[-1], memory_mb)
        too_much = ("error", f"the chat template used more than {memory_mb} MB")
        try:
            answer = _run(*job)
        except MemoryError:
            answer = too_much
        except BaseException as exc:  # noqa: B902 - a bug here: say it, in one line
            answer = ("error", f"the chat template's process failed: {type(exc).__name__}: {exc}")
        served += 1
        rss = limits.resident_bytes(os.getpid())
        more = (answer[0] == "ok" and served < JOBS_PER_CHILD and time.monotonic() - born < LIFE_SECONDS
                and (rss is None or start_rss is None or rss - start_rss < GROWTH_MB * 1024 * 1024))
        try:
            try:
                conn.send((*answer, more))
            except MemoryError:
                answer, more = None, False
                conn.send((*too_much, False))
        except (EOFError, OSError):
            return
        if not more:
            conn.close()
            return


def _run(template, messages, add_generation_prompt, bos_token, eos_token, with_cuts, seconds):
    """("ok", text, cuts) or ("error", message)."""
    import jinja2

    from tokexplorer.core.chat.sandbox import TemplateLimit, TemplateRefused, template_error_line, render_layout

    deadline = time.monotonic() + seconds
    try:
        text, cuts = render_layout(template, messages, add_generation_prompt, bos_token, eos_token,
                                   with_cuts, deadline, seconds)
    except jinja2.TemplateSyntaxError as exc:
        return ("error", f"the chat template has a syntax error on line {exc.lineno}: {exc.message}")
    except TemplateRefused as exc:
        return ("error", f"the template refused the conversation: {exc}")
    except TemplateLimit as exc:
        return ("error", f"{exc}{template_error_line(exc)}")
    except jinja2.TemplateError as exc:
        return ("error", f"the chat template failed{template_error_line(exc)}: {exc}")
    except (RecursionError, TypeError, ValueError, AttributeError, KeyError, IndexError, ZeroDivisionError,
            OverflowError, LookupError, ArithmeticError) as exc:
        if isinstance(exc, ValueError) and "int_max_str_digits" in str(exc):  # Python's advice is not the user's
            return ("error", f"the chat template failed{template_error_line(exc)}: it prints a number of over "
                             f"{sys.get_int_max_str_digits():,} digits, more than a number may have as text")
        return ("error", f"the chat template failed{template_error_line(exc)}: {type(exc).__name__}: {exc}")
    return ("ok", text, cuts)


class _Spare:
    """A started child and our end of its pipe."""

    def __init__(self, ctx, os_memory: bool):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_child, args=(child, os_memory), daemon=True,
                                   name="tokexplorer-chat-template")
        self.process.start()
        child.close()
        self.started = time.monotonic()
        self.ready = False  # its ("ready", holds_memory) read
        self.guarded = True  # memory held by the caller's guard, not the OS (known once ready)

    def end(self) -> None:
        """Kill the child (done or not) without waiting: multiprocessing reaps it at its next start
        or exit (`active_children`)."""
        if self.process.exitcode is None:
            self.process.kill()
        self.conn.close()


class TemplateRunner:
    """Renders templates in children; thread-safe (the server asks from its pool). Without
    `keep_spare` each child takes one job; with it, a child that can take more waits as the spare.
    With `os_memory` False the children set no OS memory limit and the guard holds memory, as on
    macOS (a test runs that path on Linux)."""

    def __init__(self, keep_spare: bool = False, *, os_memory: bool = True):
        self._ctx = multiprocessing.get_context("spawn")
        self._keep_spare = keep_spare
        self._os_memory = os_memory
        self._spare: _Spare | None = None
        self._lock = threading.Lock()

    def _start(self) -> _Spare:
        me = multiprocessing.current_process()
        if me.daemon:
            # subtle: the tokenizing server is a daemonic process, and multiprocessing refuses a
            # daemon children (so that none outlives it when it is terminated). Ours end with
            # their parent by themselves (exit_with_parent, RLIMIT_CPU) and are daemonic in turn.
            me.daemon = False
        return _Spare(self._ctx, self._os_memory)

    def _take(self) -> _Spare:
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and spare.process.exitcode is None:
            return spare
        if spare is not None:
            spare.end()
        with self._lock:
            return self._start()

    def _restock(self) -> None:
        """Start the next spare (after a job: the job's answer does not wait for it)."""
        if not self._keep_spare:
            return
        with self._lock:
            if self._spare is None:
                self._spare = self._start()

    def close(self) -> None:
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare.end()

    def render(self, template: str, messages: Sequence[tuple[str, str]], *, add_generation_prompt: bool,
               bos_token: str = "", eos_token: str = "", with_cuts: bool = False,
               seconds: float = MAX_SECONDS, memory_mb: int = MAX_MEMORY_MB) -> tuple[str, list[int] | None]:
        """(text, cuts) as `sandbox.render_layout` gives them, rendered in a child;
        TemplateProcessError with one line when the template fails or goes over a limit."""
        child = self._take()
        more = False
        try:
            if not child.ready:
                if not child.conn.poll(max(0.0, child.started + START_GRACE - time.monotonic())):
                    raise TemplateProcessError("the chat template's process did not start in "
                                               f"{START_GRACE:g} s")
                _, holds_memory = child.conn.recv()  # ("ready", holds_memory)
                child.ready, child.guarded = True, not holds_memory
            child.conn.send((template, [(m[0], m[1]) for m in messages], add_generation_prompt,
                             bos_token, eos_token, with_cuts, seconds, memory_mb))
            waited = limits.wait_for_answer(child.conn, child.process.pid, seconds + 1.0,
                                            memory_mb if child.guarded else None)
            if waited == "memory":  # the guard's: killed below
                raise TemplateProcessError(f"the chat template used more than {memory_mb} MB")
            if waited == "time":
                raise TemplateProcessError(f"the chat template took longer than {seconds:g} s")
            *answer, more = child.conn.recv()
        except (EOFError, OSError):
            child.process.join(1)
            raise TemplateProcessError(_ended(child.process.exitcode, seconds, memory_mb)) from None
        finally:
            if not (more and self._keep_spare and self._give_back(child)):
                child.end()
                self._restock()
        if answer[0] == "error":
            raise TemplateProcessError(answer[1])
        return answer[1], answer[2]

    def _give_back(self, child: _Spare) -> bool:
        """Keep a child that will take another job as the spare (unless there is one)."""
        with self._lock:
            if self._spare is None:
                self._spare = child
                return True
        return False


def _ended(code: int | None, seconds: float, memory_mb: int) -> str:
    """Why a child that went away without an answer went: its limits, by its exit code."""
    import signal

    if code == limits.ERROR_NOT_ENOUGH_QUOTA:  # Windows: the job's CPU-time limit
        return f"the chat template took longer than {seconds:g} s (CPU time)"
    if code is not None and code < 0:
        if code == -getattr(signal, "SIGXCPU", -1000):
            return f"the chat template took longer than {seconds:g} s (CPU time)"
        if code == -getattr(signal, "SIGKILL", -1000):
            return f"the chat template's process was killed (memory over {memory_mb} MB?)"
        return f"the chat template's process ended on signal {-code}"
    return f"the chat template's process ended (exit code {code})"


_runners: dict[bool, TemplateRunner] = {}
_runners_lock = threading.Lock()


def runner(keep_spare: bool = False) -> TemplateRunner:
    """The process's runner: with `keep_spare` (the tokenizing server) a child waits ahead."""
    with _runners_lock:
        if keep_spare not in _runners:
            _runners[keep_spare] = TemplateRunner(keep_spare)
        return _runners[keep_spare]
