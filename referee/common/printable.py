"""Text from a bot made safe to show on the organiser's terminal: no control character or sequence gets through.

A bot's output, its handshake's name, version and author, and what it says
when it cannot decide reach the organiser's terminal in fault messages and
log tails. An escape sequence there could set the window's title, write the
clipboard (OSC 52), clear the screen or move the cursor to print a fake
"league ok"; a carriage return could overwrite a line; Unicode's direction
marks could reorder one. Each such character is shown as its escape instead
(``\\x1b``, ``\\r``, ``\\u202e``); tabs and line ends stay. A name shown in
one line (a table's cell, a sentence) keeps neither: :func:`printable_line`.

The one place that decides it: the fault messages, the log tails, the
console's leaderboard and ``referee compare`` all show a bot's words through
these two functions.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# The same, and whatever breaks or spreads a line: tab, line feed, the line and paragraph separators.
_UNSAFE_IN_A_LINE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character (but tab and line end) and direction mark shown as its escape."""
    return _UNSAFE.sub(_escape, text)


def printable_line(text: str) -> str:
    """``text`` as :func:`printable` shows it, and with tabs and line ends as escapes too: one line, whatever it holds."""
    return _UNSAFE_IN_A_LINE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
