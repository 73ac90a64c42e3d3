"""The About box's text: what tokexplorer is, the versions it runs on (Qt included), and each
built-in tokenizer's source package and licence. Rich text only; the window shows it."""

from __future__ import annotations

import html

from PySide6.QtCore import qVersion

from tokexplorer import __version__
from tokexplorer.core.provenance import component_versions
from tokexplorer.core.registry import BUILTINS


def about_html() -> str:
    rows = [("Qt", qVersion())] + component_versions()
    versions = "".join(f"<tr><td>{html.escape(n)}</td><td>{html.escape(v)}</td></tr>" for n, v in rows)
    builtins = "".join(
        f"<tr><td><b>{html.escape(i.name)}</b></td><td>{html.escape(i.description)}</td>"
        f"<td>{html.escape(i.source)}</td><td>{html.escape(i.licence)}</td></tr>" for i in BUILTINS.values())
    return (
        f"<h3>tokexplorer {__version__}</h3>"
        "<p>See how LLM tokenizers turn text into tokens, offline: colour text token by token, "
        "compare tokenizers side by side, inspect bytes and code points, see how BPE built a token, "
        "train your own. Nothing is downloaded: every vocabulary ships inside an installed package "
        "and is checked against its sha256 before use. Licence: MIT.</p>"
        "<p>The legend under the editor says what the colours and marks mean (View > Show Legend).</p>"
        f"<p><b>Built-in tokenizers</b></p><table cellspacing='4'>"
        "<tr><th align='left'>name</th><th align='left'>what</th><th align='left'>source</th>"
        f"<th align='left'>licence</th></tr>{builtins}</table>"
        f"<p><b>Running on</b></p><table cellspacing='4'>{versions}</table>")
