"""A game's records as published: what a bot itself sent left out, in the referee's words alone.

A game's log and ``games.jsonl`` keep what a bot sent in its faults (the
error text of a decision it could not make, the details of the status it
ended its stream with), for the organiser and the bot's author; those
words may be anything its author chose to write (a traceback, a debug
print), so every page and file published to the other authors, the
replays and the game logs that ``referee serve`` gives anyone, tell the
fault in the referee's words alone (:func:`referee.protocol.faults.without_bot_words`).
Nor do they name a path of the organiser's machine (:func:`public_text`), or
quote more of a ladder's rejected version than the referee's summary
(:func:`public_submissions`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from referee.protocol.faults import without_bot_words
from referee.records.results import REJECTED

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


# A path of the machine that wrote a file: what follows a slash that starts a word, up to a space or punctuation.
ABSOLUTE_PATH = re.compile(r"(?<![\w.~-])/(?:[^\s/:;,'\"()\[\]]+/)*([^\s/:;,'\"()\[\]]+)")


def public_text(text: str, directory: Path | None) -> str:
    """``text`` with no path of the organiser's machine: paths inside ``directory`` relative to it, others by their last part."""
    if directory is not None:
        for root in {str(directory), str(Path(directory).resolve())}:
            text = text.replace(root.rstrip("/") + "/", "")
    return ABSOLUTE_PATH.sub(lambda match: "\u2026/" + match.group(1), text)


def public_submissions(submissions: Iterable[Mapping[str, Any]], directory: Path | None) -> list[dict[str, Any]]:
    """A ladder's submissions (``league.json``'s) as its pages show them: why a version was rejected in the
    referee's words alone (its ``summary``: never the build's output or the check's details, which are its author's).

    Each author's versions stay in the order judged; each author has a link to their own page, relative to the folder.
    """
    return [
        {
            "author": author["author"],
            "page": public_text(str(author.get("page") or ""), directory) or None,
            "versions": [
                {
                    "bot": version["bot"],
                    "version": version.get("version"),
                    "verdict": version["verdict"],
                    "status": version.get("status"),  # an accepted version's: active, withdrawn or disqualified
                    "at": version.get("at") or None,
                    "digest": version.get("digest") or None,
                    "reason": _public_reason(version),
                }
                for version in author["versions"]
            ],
        }
        for author in submissions
    ]


def _public_reason(version: Mapping[str, Any]) -> str:
    """Why a version was rejected, as everyone may read it (a ladder before summaries were kept: in two words)."""
    if version["verdict"] != REJECTED:
        return ""
    return str(version.get("summary") or "rejected: its author's page says why")
