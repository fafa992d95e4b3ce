"""A game's records as published: what a bot itself sent left out, in the referee's words alone.

A game's log and ``games.jsonl`` keep what a bot sent in its faults (the
error text of a decision it could not make, the details of the status it
ended its stream with), for the organiser and the bot's author; those
words may be anything its author chose to write (a traceback, a debug
print), so every page and file published to the other authors, the
replays and the game logs that ``referee serve`` gives anyone, tell the
fault in the referee's words alone (:func:`referee.faults.without_bot_words`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from referee.faults import without_bot_words

# Where a bot's words may be quoted: a log record's type and its field; games.jsonl's "void".
_QUOTING = {"fault": "detail", "forfeit": "reason", "game_end": "void_reason"}


def public_log_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A game log's record, with the bot's own words left out of a fault's detail, a forfeit's or a void game's reason."""
    field = _QUOTING.get(str(record.get("type")))
    shown = dict(record)
    if field is not None and isinstance(shown.get(field), str):
        shown[field] = without_bot_words(shown[field])
    return shown


def public_log(records: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    return (public_log_record(record) for record in records)


def public_game_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """A ``games.jsonl`` record, with the bot's own words left out of a void game's reason."""
    shown = dict(record)
    if isinstance(shown.get("void"), str):
        shown["void"] = without_bot_words(shown["void"])
    return shown
