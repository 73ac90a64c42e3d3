"""The editing soak: random edits with tokenizer switches on a book-length text, measuring whether
memory and threads stay flat and the tokens stay right (equal to the tokenizing server's fresh
encode of the final text, `EncodeIds`); `tokexplorer bench --soak N`, and a test with a short budget.

A real main window (offscreen when there is no display) opens the text, with the chunk view
showing; a warm-up fills the caches that are meant to stay: Qt lays out every line once (as
reading the text through does), then edits and one switch through every tokenizer; then N edits
(insert, delete, paste, undo), switching tokenizer every `switch_every` edits and letting the
window settle now and then, as a user pausing would; then one more switch through every tokenizer,
so both readings are taken in the same state. Deletions take back what insertions add, so the text
stays near its first length, and its tokens near their first count (`balanced`). It does not judge
the numbers: the caller (the test, the benchmark table) does.

What is measured, and why (found with mallinfo2, /proc/self/smaps and a bare QPlainTextEdit given
the same edits, November 2026):

- RSS is read after settling, with freed memory handed back to the system (`core.memory_reading`),
  so what remains is what is held: after each tokenizer of a switch through all of them, and the
  median of those readings kept (warm-up and end alike), since one reading strays by tens of MB.
- The heap in use (`heap_*_mb`, glibc's mallinfo2 `uordblks` over every arena plus `hblkhd`, the
  chunks it maps by themselves), the window's and the server's, is what each process holds; the
  heap's free part (`fordblks`) is memory freed but kept by the allocator (fragmentation,
  retention), not a leak. A leak shows as growth of the heap in use.
- subtle: Qt keeps each line's layout once it has been laid out (QPlainTextDocumentLayout; about
  2.7 KB per line, freed only with the line), whether the line was shown or only measured to
  place the cursor. Random edits jump all over the text, so without the warm-up's pass over every
  line that retention (bounded by the text: ~95 MB for the 35,000 lines of the 1 MB text) would
  read as growth for the first few thousand edits. A plain QPlainTextEdit does the same.
- subtle: Python's own small-object allocator keeps its 1 MiB arenas while any object in them
  lives, so RSS can grow beyond the heap in use (+92 to +127 MB over 10,000 edits when the window
  tokenized in process, heap in use +26 to +34 MB). Tokenizing now runs in the server, whose RSS
  is read beside the window's, after a collection and a trim too (`Ping(settle=True)`).
- subtle: glibc gives each thread that allocates an arena of its own, and keeps what is freed at
  the top of a thread's arena resident through malloc_trim, up to its trim threshold, which it
  raises to twice the largest mapped chunk freed so far (at most 64 MB an arena): a thread that
  freed 40 MB of 2 MB blocks after a 24 MB one had been freed kept all 40 resident after the
  trim. The server's threads (a document's, two for queries, a split beside a long encode) each
  reach their arena's high-water mark at their own time, so its RSS rises by steps its heap in
  use does not show: replaying a recorded 3,000-edit soak's requests, the server's resident
  memory outside its heap in use and Python's arenas went from 35 to 102 MB by the first reading
  and stayed there, while the arenas' size grew from 507 to 725 MB, mostly free.
- subtle: the snippets take more tokens per character than the book (an emoji, CJK, digits, a
  special token spelled out), so a text kept at its first length by deletions of the book still
  gained tokens as snippets replaced it: over 10,000 edits 300,742 -> 367,396 GPT-2 tokens (+22%;
  o200k +17%), and both processes' heap in use grew with them (each holds the columns of every
  token), which read as a creep of ~3 MB per 1,000 edits in each. Once the text holds more tokens
  per UTF-16 unit than after the warm-up (under the tokenizer shown), insertions and pastes put in
  a piece of the book of the same length instead of snippets, so the token count stays near its
  first (reported, start -> end) and growth measures memory held, not more tokens.
- The window's RSS after malloc_trim is still noisy by tens of MB with the heap in use unchanged: single
  readings of 20-edit runs gave -56 to +49 MB, the medians above -39 to +7 MB. A short run says
  little; a leak shows in the heap in use first.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

from tokexplorer.core.memory_reading import heap_mb, settle_for_reading
from tokexplorer.core.headless import use_offscreen

SETTLE_EVERY = 10  # edits between pauses in which the window catches up
SWITCH_EVERY = 50  # edits between tokenizer switches
REPORT_EVERY = 500  # edits between the progress lines of `main`
SNIPPETS = ["the ", "e", "\n", "Hello, world! ", "    indented()\n", "naïve café ", "日本語", "👋🏽 ", "12345 ",
            "<|endoftext|>", "\t", "'s", "don't "]


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux), after handing freed memory back."""
    settle_for_reading()
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


# Threads that come and go by design: a thread pool's (capped by its pool, ended after 30 s idle;
# one more runs while jobs overlap, as they do on a loaded machine). A leak is any other thread.
TRANSIENT_THREADS = ("Thread (pooled)",)


def thread_count() -> int:
    """Threads of this process, Qt's included (not only Python's), except `TRANSIENT_THREADS`."""
    names = []
    for task in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ():
        try:
            with open(f"/proc/self/task/{task}/comm", encoding="utf-8", errors="replace") as f:
                names.append(f.read().strip())
        except OSError:  # it ended meanwhile
            continue
    if not names:
        return threading.active_count()
    return sum(not name.startswith(TRANSIENT_THREADS) for name in names)


def run_soak(edits: int, text: str, *, seed: int = 0, switch_every: int = SWITCH_EVERY,
             timeout_s: float = 120.0, report_every: int = 0) -> dict:
    """Run the soak in this process (it needs a QApplication; one is made if there is none).

    `report_every`: print a line on stderr every that many edits (RSS, heap in use), so a long run
    shows its course, and its figures so far if it is stopped.
    """
    use_offscreen(always=True)  # a soak never needs to be seen
    if not os.environ.get("TOKEXPLORER_SETTINGS_DIR"):
        os.environ["TOKEXPLORER_SETTINGS_DIR"] = tempfile.mkdtemp(prefix="tokexplorer-soak-")
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from tokexplorer.gui.app import HeadlessDialogs, settled
    from tokexplorer.gui.main_window import MainWindow
    from tokexplorer.core.positions import editor_text
    from tokexplorer.server.protocol import EncodeIds, Ping

    app = QApplication.instance() or QApplication(["tokexplorer-soak"])
    window = MainWindow(dialogs=HeadlessDialogs())
    window.state.set_policy("none")  # the snippets spell <|endoftext|>
    window.show()
    window.chunk_dock.raise_()  # the chunk view computes only while visible
    names = window.state.catalog.names()
    rng = random.Random(seed)

    def settle() -> None:
        deadline = time.monotonic() + timeout_s
        while not settled(window):
            if time.monotonic() > deadline:
                raise TimeoutError("the window did not settle")
            app.processEvents()
            time.sleep(0.002)

    def boundary(position: int) -> int:
        """The position, moved off the middle of a surrogate pair.

        subtle: a user's cursor never stops between the two halves of an emoji, but a random
        position can, and an edit there leaves lone surrogates that Qt keeps and Python cannot see.
        """
        doc = window.editor.document()
        low = doc.characterAt(position)
        return position - 1 if len(low) == 1 and 0xDC00 <= ord(low) <= 0xDFFF else position

    density: dict[str, float] = {}  # tokens per UTF-16 unit of each tokenizer's text after warm-up

    def balanced(snippet: str, n: int) -> str:
        """The snippet, or a piece of the book as long if the text now holds more tokens per
        UTF-16 unit than after the warm-up (the snippets' characters take more tokens)."""
        result, first = window.state.result, density.get(window.state.tokenizer)
        if first is None or result is None or len(result.encoding) <= first * n:
            return snippet
        at = rng.randrange(len(text) - len(snippet))
        return text[at:at + len(snippet)]

    def edit() -> None:
        editor = window.editor
        n = editor.document().characterCount() - 1
        cursor = editor.textCursor()
        kind = rng.choice(["insert", "insert", "delete", "paste", "undo"])
        if kind == "undo":
            editor.undo()
            return
        at = boundary(rng.randrange(n + 1))
        cursor.setPosition(at)
        if kind == "delete":
            # Deletions take back what insertions and pastes add, so the text stays near its first
            # length (a few hundred characters over): growth then measures memory held, not a
            # longer text (+0.75% per 400 edits otherwise, some 90 MB of tokens over 10,000).
            longest = 40 + max(0, n - length16)
            cursor.setPosition(boundary(min(n, at + rng.randrange(1, longest))), cursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            return
        editor.setTextCursor(cursor)
        snippet = "".join(rng.choice(SNIPPETS) for _ in range(rng.randrange(1, 6)))
        if kind == "paste":
            QApplication.clipboard().setText(balanced(snippet * rng.randrange(1, 20), n))
            editor.paste()
        else:
            cursor.insertText(balanced(snippet, n))
        app.processEvents()

    def session(count: int, start: int, report: int = 0) -> int:
        for i in range(count):
            edit()
            if (i + 1) % SETTLE_EVERY == 0:
                settle()
            if (i + 1) % switch_every == 0:
                start += 1
                window.state.set_tokenizer(names[start % len(names)])
                settle()
            if report and (i + 1) % report == 0:
                settle()
                print(f"soak: {i + 1} edits, {reading()}", file=sys.stderr, flush=True)
        settle()
        return start

    def lay_out_every_line() -> None:
        """What reading the text through does: Qt lays out (and keeps) every line's layout."""
        doc = window.editor.document()
        layout, block = doc.documentLayout(), doc.begin()
        while block.isValid():
            layout.blockBoundingRect(block)
            block = block.next()

    started = time.perf_counter()
    window.editor.load_text(editor_text(text))
    settle()
    length16 = window.editor.document().characterCount() - 1
    lay_out_every_line()

    def server_mb() -> tuple[float, float]:
        """The tokenizing server's resident memory and its C heap in use, read as the window's are
        (after a collection and a trim); 0 where the system does not tell."""
        facts = []
        window.state.server.ask(Ping(settle=True), facts.append, facts.append)
        deadline = time.monotonic() + timeout_s
        while not facts and time.monotonic() < deadline:
            app.processEvents()
            time.sleep(0.002)
        if not facts or isinstance(facts[0], str):
            return 0.0, 0.0
        return facts[0].rss_mb or 0.0, facts[0].heap_mb or 0.0

    def every_tokenizer(edits_each: int = 0, *, read: bool = False, tokens: dict | None = None
                        ) -> tuple[float, float, float] | None:
        """Switch through every tokenizer (ending on the last: the same state for each reading);
        if `read`, the medians of the window's RSS, the server's and the server's heap in use,
        read after each; into `tokens`, each tokenizer's count of the text's tokens."""
        readings, server, server_heap = [], [], []
        for name in names:
            window.state.set_tokenizer(name)
            settle()
            for _ in range(edits_each):
                edit()
            settle()
            if tokens is not None and window.state.result is not None:
                tokens[name] = len(window.state.result.encoding)
            if read:
                readings.append(rss_mb())
                rss, heap = server_mb()
                server.append(rss)
                server_heap.append(heap)
        return (statistics.median(readings), statistics.median(server), statistics.median(server_heap)) if read else None

    # Warm-up: edits under every tokenizer fill the caches meant to stay (each one's incremental rule).
    every_tokenizer(SETTLE_EVERY)
    turn = session(min(100, max(edits, SETTLE_EVERY)), 0)
    tokens_warm: dict[str, int] = {}
    (warm, server_warm, server_heap_warm), heap_warm, threads_warm = (every_tokenizer(read=True, tokens=tokens_warm),
                                                                      heap_mb(), thread_count())
    units = window.editor.document().characterCount() - 1
    density.update((name, count / units) for name, count in tokens_warm.items())

    def reading() -> str:
        rss, heap, (server, server_heap) = rss_mb(), heap_mb(), server_mb()
        line = (f"RSS {rss:.0f} MB ({rss - warm:+.0f}), server {server:.0f} MB ({server - server_warm:+.0f}; "
                f"heap in use {server_heap - server_heap_warm:+.0f})")
        if heap is not None and heap_warm is not None:
            line += f", heap in use {heap[0]:.0f} MB ({heap[0] - heap_warm[0]:+.0f}), free {heap[1]:.0f} MB"
        length = window.editor.document().characterCount() - 1
        return f"{line}, {thread_count()} threads, text {length - length16:+} UTF-16 units, {time.perf_counter() - started:.0f} s"

    session(edits, turn, report_every)
    tokens_end: dict[str, int] = {}
    (end, server_end, server_heap_end), heap_end, threads_end = (every_tokenizer(read=True, tokens=tokens_end),
                                                                 heap_mb(), thread_count())
    name, policy, text_end = window.state.tokenizer, window.state.effective_policy, window.editor.user_text()
    fresh = []  # the server's fresh encode of the editor's text, or its error message
    window.state.server.ask(EncodeIds(name, text_end, policy), fresh.append, fresh.append)
    deadline = time.monotonic() + timeout_s
    while not fresh:
        if time.monotonic() > deadline:
            raise TimeoutError("the tokenizing server did not encode the text")
        app.processEvents()
        time.sleep(0.002)
    result = window.state.result
    equal = (result is not None and not isinstance(fresh[0], str) and result.encoding.text == text_end
             and np.array_equal(result.encoding.id_array, fresh[0]))
    length16_end = window.editor.document().characterCount() - 1
    window.editor.document().setModified(False)
    window.close()
    window.deleteLater()
    report = {
        "edits": edits, "tokenizers": names, "text_mb": round(len(text.encode("utf-8")) / 1e6, 2),
        "rss_warm_mb": round(warm, 1), "rss_end_mb": round(end, 1), "window_growth_mb": round(end - warm, 1),
        "server_rss_warm_mb": round(server_warm, 1), "server_rss_end_mb": round(server_end, 1),
        "server_growth_mb": round(server_end - server_warm, 1),
        "server_heap_in_use_warm_mb": round(server_heap_warm, 1), "server_heap_in_use_end_mb": round(server_heap_end, 1),
        "server_heap_growth_mb": round(server_heap_end - server_heap_warm, 1),
        "growth_mb": round(end - warm + server_end - server_warm, 1),
        "threads_warm": threads_warm, "threads_end": threads_end,
        "tokens_equal_fresh_encode": equal, "seconds": round(time.perf_counter() - started, 1),
        "text_utf16_start": length16, "text_utf16_end": length16_end,
        "tokens_warm": tokens_warm, "tokens_end": tokens_end,
    }
    if heap_warm is not None and heap_end is not None:
        report.update({
            "heap_in_use_warm_mb": round(heap_warm[0], 1), "heap_in_use_end_mb": round(heap_end[0], 1),
            "heap_growth_mb": round(heap_end[0] - heap_warm[0], 1),
            "heap_free_warm_mb": round(heap_warm[1], 1), "heap_free_end_mb": round(heap_end[1], 1),
        })
    return report


def soak_text(path: Path, size: int = 1_000_000) -> str:
    """About `size` bytes of text: the file, repeated or cut at a line end."""
    text = path.read_text("utf-8")
    text = text * (size // max(1, len(text.encode("utf-8"))) + 1)
    cut = text.rfind("\n", 0, size)
    return text[: cut + 1 if cut > 0 else size]


def main(argv: list[str]) -> int:
    """`python -m tokexplorer.gui.bench.soak EDITS CORPUS`: run the soak, print its result as JSON (and a
    line on stderr every REPORT_EVERY edits in a longer run)."""
    import argparse
    import faulthandler
    import json

    parser = argparse.ArgumentParser(
        prog="python -m tokexplorer.gui.bench.soak",
        description="The editing soak: EDITS random edits in a real window on about 1 MB of CORPUS; "
        "prints the readings as JSON (tokexplorer bench --soak N runs it).")
    parser.add_argument("edits", type=int, metavar="EDITS", help="how many edits (a whole number from 1)")
    parser.add_argument("corpus", type=Path, metavar="CORPUS", help="a UTF-8 text file, repeated or cut to 1 MB")
    args = parser.parse_args(argv)
    if args.edits < 1:
        parser.error(f"EDITS must be a whole number from 1, not {args.edits}")
    if not args.corpus.is_file():
        parser.error(f"no such text file: {args.corpus}")
    faulthandler.enable()  # a crash inside Qt prints where the Python side was (one did, at ~2,000 edits)
    edits, corpus = args.edits, args.corpus
    print(json.dumps(run_soak(edits, soak_text(corpus), report_every=REPORT_EVERY)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
