"""Tables of results (a header row, then rows of numbers and names) as CSV text.

The analyses (sweep, languages, token_lengths) each give their numbers as such a table; the command
line and the plots' "Export CSV" write this text, so the file holds exactly the core's numbers.
"""

from __future__ import annotations

import csv
import io


def csv_text(table: list[list[object]]) -> str:
    """The table as CSV (comma-separated, quoted where needed, `\\n` line ends).

    >>> print(csv_text([["language", "tokens"], ["Arabic, Standard", 3]]), end="")
    language,tokens
    "Arabic, Standard",3
    """
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(table)
    return out.getvalue()
