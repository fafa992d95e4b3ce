"""Text from a bot made safe to show on the organiser's terminal: no control character or sequence gets through.

A bot's output, its handshake's name, version and author, and what it says
when it cannot decide reach the organiser's terminal in fault messages and
log tails. An escape sequence there could set the window's title, write the
clipboard (OSC 52), clear the screen or move the cursor to print a fake
"league ok"; a carriage return could overwrite a line; Unicode's direction
marks could reorder one. Each such character is shown as its escape instead
(``\\x1b``, ``\\r``, ``\\u202e``); tabs and line ends stay.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character (but tab and line end) and direction mark shown as its escape."""
    return _UNSAFE.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
