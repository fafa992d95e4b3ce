"""A game's replay page: one self-contained HTML file (its script, style and data inline) that opens anywhere.

Every step of the game (:mod:`referee.records.transcript`) becomes a *frame*: the
whole table after the step, each seat's view of it (from
:meth:`Game.observation`), and the step's line for everyone and for each
seat. Frames are computed here, from the engine, so the page only draws
them; they are stored as differences from the frame before (a key that did
not change is left out, one that went away is ``null``), which keeps a
page of a few hundred moves to a few tens of kilobytes.
"""

from __future__ import annotations

import base64
import gzip
import html
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from referee.common.atomic import replace_file
from referee.engine.cards import format_cards
from referee.engine.games import BastardBragObservation, Observation, StopTheBusObservation
from referee.publish.redaction import public_log
from referee.records.transcript import NOTED_STEPS, Step, read_game

ASSETS = Path(__file__).resolve().parent / "html"
PAGE_FORMAT = 1  # the data's layout, for the page's script
PILE_SHOWN = 4  # discard pile cards kept per frame, top first (the page shows the top few fanned)


def frame(step: Step) -> dict[str, Any]:
    """One step as the page draws it (before the frames are stored as differences)."""
    table = step.table
    data: dict[str, Any] = {
        "k": step.kind,
        "h": step.hand_number,
        "s": step.seat,
        "n": step.decision,
        "t": step.brief,
        "lives": list(table.lives),
        "in": [int(flag) for flag in table.in_game],
        "ih": [int(flag) for flag in table.in_hand],
        "d": table.dealer,
        "cur": table.current_seat,
        "e": table.ender,
    }
    data.update(_seat_lines(step.brief, step.seat_briefs))
    if any(table.floating):
        data["fl"] = [int(flag) for flag in table.floating]
    if table.centre:
        data["centre"] = format_cards(table.centre)
    else:
        data["stock"] = len(table.stock)
        data["next"] = str(table.stock[0]) if table.stock else None
        data["pile"] = format_cards(table.discard_pile[:PILE_SHOWN])
        data["pc"] = len(table.discard_pile)
    # What each seat saw: its own hand (the referee's view of that hand too), the card it just drew or took,
    # and in Bastard Brag the face-down centre cards it knows.
    for seat, view in enumerate(step.views):
        if view.hand != table.hands[seat]:
            raise AssertionError(f"seat {seat}'s view of its hand differs from the table at step {step.number}")
        data[f"o{seat}"] = _view(view)
    if step.kind == "hand":
        record = step.record
        data["rev"] = {seat: [cards, record["ranks"][seat]] for seat, cards in record["hands"].items()}
        data["loser"] = record["loser"]
        data["out"] = record["eliminated"]
    if step.kind == "fault":
        data["fault"] = step.record["kind"]
    return data


def _seat_lines(everyone: str, lines: Sequence[str]) -> dict[str, Any]:
    """Each seat's line, compactly: ``v`` the line most seats saw (when not ``t``), ``vx`` the others by seat.

    In ``vx``, 0 stands for ``t`` (the acting seat usually saw its move whole).
    """
    common = max(set(lines), key=lines.count)
    data: dict[str, Any] = {} if common == everyone else {"v": common}
    others = {str(seat): 0 if line == everyone else line for seat, line in enumerate(lines) if line != common}
    if others:
        data["vx"] = others
    return data


def _view(view: Observation) -> list[str]:
    if isinstance(view, BastardBragObservation):
        return [format_cards(view.hand), *("" if card is None else str(card) for card in view.centre[:2])]
    if isinstance(view, StopTheBusObservation) and view.drawn_card is not None:
        return [format_cards(view.hand), str(view.drawn_card)]
    return [format_cards(view.hand)]


def as_differences(frames: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each frame as its differences from the one before: changed keys, and ``None`` for keys gone."""
    out: list[dict[str, Any]] = []
    previous: dict[str, Any] = {}
    for current in frames:
        change = {key: value for key, value in current.items() if previous.get(key, _MISSING) != value}
        change.update({key: None for key in previous if key not in current})
        out.append(change)
        previous = current
    return out


_MISSING = object()


def page_data(
    start: dict[str, Any],
    steps: Sequence[Step],
    back: str | None = None,
    notes: Mapping[int, tuple[int, str]] | None = None,
) -> dict[str, Any]:
    """Everything the page shows: the game, its players and result, and the frames.

    ``notes`` (bots' private notes by decision number: the seat and the note, :mod:`referee.records.notes`) are
    put in the frame of their decision (``nt``, and ``ns`` the seat): only an author's private replay, or an
    organiser's own page, is ever given any.
    """
    end = next((step.record for step in reversed(steps) if step.kind == "game_end"), None)
    hands = sorted({step.hand_number for step in steps if step.kind == "deal"})
    frames = [frame(step) for step in steps]
    noted = dict(notes or {})
    for step, made in zip(steps, frames, strict=True):
        note = noted.pop(step.decision, None) if step.decision is not None and step.kind in NOTED_STEPS else None
        if note is not None:
            made["ns"], made["nt"] = note
    return {
        "format": PAGE_FORMAT,
        "game_id": start["game_id"],
        "game": start["game"],
        "players": start["players"],
        "seed": str(start["seed"]),  # digits: a JavaScript number would round a 64-bit seed
        "timing": start.get("timing"),
        "policy": start.get("policy"),
        "referee_version": start.get("referee_version"),
        "placements": end["placements"] if end else None,
        "void": end.get("void_reason") if end and end.get("void") else None,
        "decisions": end["decisions"] if end else sum(step.kind == "decision" for step in steps),
        "hands": hands,
        "back": back,
        "notes_of": sorted({start["players"][seat] for seat, _ in (notes or {}).values()}),
        "frames": as_differences(frames),
    }


def packed(data: dict[str, Any]) -> str:
    """The page's data as base64 of gzipped JSON (the page unpacks it with the browser's DecompressionStream).

    Compressed, a game's frames take a fifth of the room, which keeps a
    league's folder of replays small; ``mtime=0`` keeps the bytes the same
    for the same game.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return base64.b64encode(gzip.compress(text, compresslevel=9, mtime=0)).decode("ascii")


def unpacked(text: str) -> dict[str, Any]:
    """The data of :func:`packed` (for tests and tools)."""
    data: dict[str, Any] = json.loads(gzip.decompress(base64.b64decode(text)))
    return data


def render(data: dict[str, Any]) -> str:
    """The replay page: the template with its style, script and (packed) data put inline."""
    template = (ASSETS / "replay.html").read_text(encoding="utf-8")
    title = f"{data['game_id']}: {data['game'].replace('_', ' ')} — replay"
    return (
        template.replace("{{title}}", html.escape(title))
        .replace("/*{{style}}*/", compact_source(ASSETS / "replay.css"))
        .replace("{{data}}", packed(data))
        .replace("/*{{script}}*/", page_script("replay.js"))
    )


def compact_source(path: Path) -> str:
    """A script or style sheet without its indentation and whole-line comments (it is inlined in every page)."""
    lines = (line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    return "\n".join(line for line in lines if line and not line.startswith("//"))


def page_script(name: str) -> str:
    """A page's script (``html/NAME``) after what the replay and the live pages share (``html/cards.js``)."""
    return compact_source(ASSETS / "cards.js") + "\n" + compact_source(ASSETS / name)


def page_data_of(html_text: str) -> dict[str, Any]:
    """The data inside a replay page (for tests and tools)."""
    start = html_text.index('<script id="game"')
    start = html_text.index(">", start) + 1
    return unpacked(html_text[start : html_text.index("</script>", start)].strip())


def replay_page(
    start: dict[str, Any],
    steps: Sequence[Step],
    back: str | None = None,
    notes: Mapping[int, tuple[int, str]] | None = None,
) -> str:
    """A game's replay page, as HTML text; ``back`` is a link to show back to the leaderboard; ``notes``: the bots'
    private notes shown beside their decisions (see :func:`page_data`)."""
    return render(page_data(start, steps, back, notes))


def write_replay_page(
    start: dict[str, Any],
    steps: Sequence[Step],
    path: Path,
    back: str | None = None,
    notes: Mapping[int, tuple[int, str]] | None = None,
) -> int:
    """Write the replay page to ``path`` (replaced in one step); return its size in bytes."""
    text = replay_page(start, steps, back, notes)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_file(path, text)
    return len(text.encode("utf-8"))


def write_replay_of_log(log_path: Path, page_path: Path, back: str | None = None) -> int:
    """Read a game log and write its replay page, published to everyone: a fault told in the referee's words alone
    (:mod:`referee.publish.redaction`); return the page's size in bytes."""
    start, steps = read_game(log_path, public_log)
    return write_replay_page(start, steps, page_path, back)
