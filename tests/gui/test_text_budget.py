"""A text over the window's budget is refused with a way on (its beginning as an untitled sample),
instead of growing the window to many GB (issue 13: a 200 MB file took 8.5-11 GB)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QPushButton

from tokexplorer.core.files import text_budget
from tokexplorer.core.files.text_budget import TextTooBig, check_size, read_sample

LINE = "naïve café 👋 line {}\n"


def lines(n: int) -> str:
    return "".join(LINE.format(i) for i in range(n))


def test_a_file_over_the_budget_is_refused_and_says_how_to_go_on(tmp_path):
    path = tmp_path / "big.txt"
    with pytest.raises(TextTooBig) as info:
        check_size(path, 200_000_000)
    message = str(info.value)
    assert "200 MB, over the 64 MB the window opens" in message and "10 GB" in message
    assert f"tokexplorer encode --file '{path}' --ids-only" in message
    check_size(path, 64_000_000)  # at the budget: opened


@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-16-le-nobom", "latin-1"])
def test_a_sample_is_the_beginning_cut_after_a_line(tmp_path, encoding):
    text = lines(400) if encoding != "latin-1" else lines(400).replace("👋", "x")
    path = tmp_path / "big.txt"
    name, given = encoding, None
    if encoding == "utf-16-le-nobom":  # no BOM: read only when the user names the encoding
        name = given = "utf-16-le"
    elif encoding == "latin-1":
        given = "latin-1"
    path.write_bytes(text.encode(name))
    limit_mb = 0.003  # 3,000 bytes: inside a line, maybe inside a character
    sample = read_sample(path, given, lambda done, total: None, limit_mb)
    assert text.startswith(sample) and sample.endswith("\n")
    longest = max(len(line.encode(name)) for line in text.splitlines(keepends=True))
    assert len(sample.encode(name)) <= 3_000 < len(sample.encode(name)) + longest + 4  # no line lost but the cut one


def test_a_sample_that_is_not_utf8_asks_for_its_encoding(tmp_path):
    from tokexplorer.core.files.textfile import NotUtf8Error

    path = tmp_path / "latin.txt"
    path.write_bytes("café\n".encode("latin-1") * 1000)
    with pytest.raises(NotUtf8Error):
        read_sample(path, None, lambda done, total: None, 0.001)


def test_the_window_refuses_a_big_file_and_opens_its_beginning_untitled(make_window, qtbot, tmp_path, monkeypatch):
    monkeypatch.setattr(text_budget, "WINDOW_TEXT_LIMIT_MB", 0.002)
    text = lines(200)
    path = tmp_path / "big.txt"
    path.write_text(text, encoding="utf-8")
    window = make_window()
    reported = []
    window.reported.connect(reported.append)
    window.documents.open_text(path, asked=True)
    qtbot.waitUntil(lambda: window.banner.kind == "error", timeout=10_000)
    assert "over the 0.002 MB the window opens" in window.banner.label.text()
    assert reported and window.state.path is None
    [button] = [b for b in window.banner.findChildren(QPushButton) if b.text() == "Open the first 0.002 MB"]
    button.click()
    qtbot.waitUntil(lambda: window.banner.kind == "note" and not window.editor.isReadOnly()
                    and window.state.result is not None, timeout=30_000)
    shown = window.editor.display_text()
    assert text.startswith(shown) and shown.endswith("\n") and 0 < len(shown.encode("utf-8")) <= 2_000
    assert window.state.path is None and not window.state.modified  # Save asks for a new file
    assert "big.txt: its first" in window.banner.label.text() and "untitled" in window.banner.label.text()
    qtbot.waitUntil(lambda: window.state.result.encoding.text == shown, timeout=30_000)  # and tokenized
