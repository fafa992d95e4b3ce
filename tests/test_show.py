"""`referee show` and `play --verbose`: transcripts of real games, and a seat's transcript names only what it saw."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from referee.cli import main as referee_main
from referee.engine.cards import Card, parse_cards, pretty_cards
from referee.engine.games.game import Action
from referee.records.gamelog import new_game
from referee.records.transcript import read_game, transcript_json, transcript_lines

from .conftest import FAST, PYTHON, SAMPLE_BOTS
from .game_logs import logged_game, records

# A card named in a line (as people read it: 10♥) or in JSON (as the logs write it: TH).
CARD = re.compile(r"(?<![\w#])((?:10|[2-9JQKA])[♣♦♥♠]|[2-9TJQKA][CDHS])(?!\w)")
ALL_GAMES = ["stop_the_bus", "bastard_brag", "faults"]


def people(cards: str) -> str:
    """Cards of a log record (TH 2C) as a person reads them in a transcript (10♥ 2♣)."""
    return pretty_cards(parse_cards(cards))


def named_cards(text: str) -> set[str]:
    """The cards ``text`` names, in either form, each as the logs write it (TH)."""
    return {str(Card.parse(found)) for found in CARD.findall(text)}


def show(capsys, *args: str) -> tuple[int, str, str]:
    status = referee_main(["show", *map(str, args)])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.parametrize("name", ALL_GAMES)
def test_the_transcript_tells_every_move_with_the_cards(name: str, capsys) -> None:
    log = records(name)
    status, out, _ = show(capsys, logged_game(name))
    assert status == 0
    lines = out.splitlines()
    assert len(lines) == len(log), "one header line, then one line per record after game_start"
    start = log[0]
    assert start["game_id"] in lines[0] and all(player in lines[0] for player in start["players"])
    assert f"; deal seed {start['seed']}; " in lines[0], "the game's seed, named for what it is: the table's deals"
    for record, line in zip(log[1:], lines[1:], strict=True):
        kind = record["type"]
        if kind == "deal":
            assert line.startswith(f"hand {record['hand']} dealt by seat {record['dealer']}")
            for seat, cards in record["hands"].items():
                assert f"seat {seat} {start['players'][int(seat)]}: {people(cards)}" in line
        elif kind == "decision":
            seat = record["seat"]
            assert line.startswith(
                f"  {record['n']}. seat {seat} {start['players'][seat]} [{people(record['holding'])}] "
            )
            action = Action.parse(record["action"])
            words = {
                "draw": "draws",
                "take": "takes",
                "discard": "discards",
                "stop": "stops the bus",
                "pass": "passes",
                "exchange": "gives",
                "exchange-all": "swaps the hand",
                "knock": "knocks",
            }
            assert words[action.kind.value] in line
            if action.card is not None:
                assert action.card.pretty in line
            if "drew" in record:
                assert f"draws {people(record['drew'])} from the stock" in line
            if record.get("default"):
                assert "default action" in line
        elif kind == "hand" and record["loser"] is not None:
            for seat, cards in record["hands"].items():
                assert f"seat {seat} {start['players'][int(seat)]} {people(cards)} {record['ranks'][seat]}" in line
            loser = f"seat {record['loser']} {start['players'][record['loser']]}"
            assert f"{loser} loses" in line
            for out_seat in record["eliminated"]:
                assert "out of the game" in line and str(out_seat) in line
        elif kind == "fault":
            assert f"seat {record['seat']} {record['bot']}: {record['kind']}: {record['detail']}" in line
        elif kind == "game_end":
            places = ", ".join(
                f"{place}. seat {seat} {start['players'][seat]}" for place, seat in enumerate(record["placements"], 1)
            )
            assert line.startswith("game over") and places in line


COMPACT_CARD = re.compile(r"(?<![\w#])[2-9TJQKA][CDHS](?!\w)")  # TH: the logs' form, not for people


@pytest.mark.parametrize("name", ALL_GAMES)
def test_every_line_names_cards_as_people_read_them_a_ten_as_10(name: str) -> None:
    start, steps = read_game(logged_game(name))
    tens = 0
    for step in steps:
        if step.kind == "fault":
            continue  # the referee's detail quotes the bot's move in the action's own form (discard TH), as logged
        for line in (step.text, step.brief, *step.seat_texts, *step.seat_briefs):
            assert not COMPACT_CARD.search(line), line
            tens += len(re.findall(r"(?<!\w)10[♣♦♥♠]", line))
    assert tens, "the game's lines name some ten"


def test_a_faulty_game_shows_the_fault_and_the_default_action_in_place() -> None:
    start, steps = read_game(logged_game("faults"))
    kinds = [step.kind for step in steps]
    faults = [i for i, kind in enumerate(kinds) if kind == "fault"]
    assert len(faults) == 2
    for index in faults:
        replaced = steps[index + 1]
        assert replaced.kind == "decision" and replaced.record.get("default")
        assert replaced.decision == steps[index].decision
        assert steps[index].record["log"].endswith(".log") and steps[index].record["log_line"] >= 0


def seat_knowledge(log: list[dict], seat: int) -> list[set[str]]:
    """What ``seat`` could know after each record, rebuilt here from the engine alone.

    Its observations (its cards, the discard top, the card it drew, the centre
    cards it knows), the public events of the hands so far, and the hands shown
    at showdowns. After a move that ends a hand, the new hand's cards are not
    known yet: they come with the next deal record.
    """
    game = new_game(log[0])
    known: set[str] = set()

    def observe() -> None:
        view = game.observation(seat)
        known.update(map(str, view.hand))
        for card in (
            getattr(view, "discard_top", None),
            getattr(view, "drawn_card", None),
            *getattr(view, "centre", ()),
        ):
            if card is not None:
                known.add(str(card))

    def public(up_to_hand: int) -> None:
        for event in game.events:
            if event.hand_number <= up_to_hand:
                known.update(str(card) for card in (event.card, event.taken) if card is not None)
        for result in game.hand_results:
            for cards in result.hands.values():
                known.update(map(str, cards))

    observe()
    after: list[set[str]] = []
    for record in log[1:]:
        hand = game.hand_number
        if record["type"] == "decision":
            game.apply(Action.parse(record["action"]))
        elif record["type"] == "forfeit":
            game.forfeit(record["seat"], record["reason"])
        if record["type"] in ("decision", "forfeit") and (game.hand_number != hand or game.is_over):
            public(hand)
        else:
            observe()
            public(game.hand_number)
        after.append(set(known))
    return after


@pytest.mark.parametrize("name", ALL_GAMES)
def test_a_seat_transcript_never_names_a_card_the_seat_could_not_know(name: str) -> None:
    log = records(name)
    start, steps = read_game(logged_game(name))
    hidden_named_somewhere = False
    for seat in range(start["num_players"]):
        knowledge = seat_knowledge(log, seat)
        lines = list(transcript_lines(start, steps, seat))[1:]
        assert len(lines) == len(knowledge)
        full = list(transcript_lines(start, steps))[1:]
        data = transcript_json(start, steps, seat)["steps"]
        for number, (line, known) in enumerate(zip(lines, knowledge, strict=True)):
            named = named_cards(line)
            assert named <= known, f"seat {seat}, step {number}: {line!r} names {sorted(named - known)}"
            view_cards = named_cards(json.dumps(data[number], ensure_ascii=False))
            assert view_cards <= known, f"seat {seat}, step {number}: its JSON view names {sorted(view_cards - known)}"
            hidden_named_somewhere |= bool(named_cards(full[number]) - known)
        # The seat sees its own moves whole: every holding it was asked with is in its transcript.
        for record in log:
            if record["type"] == "decision" and record["seat"] == seat:
                assert any(f"[{people(record['holding'])}]" in line for line in lines)
    # The check has teeth: the referee's own transcript names cards some seat could not know.
    assert hidden_named_somewhere


def test_show_by_game_id_in_a_league_directory_and_as_json(tmp_path: Path, capsys) -> None:
    (tmp_path / "games").mkdir()
    (tmp_path / "games" / "g1.jsonl").write_bytes(logged_game("bastard_brag").read_bytes())
    status, out, _ = show(capsys, "g1", "--output", tmp_path, "--json")
    assert status == 0
    data = json.loads(out)
    log = records("bastard_brag")
    assert len(data["steps"]) == len(log) - 1
    # Before each decision the table holds the acting seat's cards as the log says it was asked with them.
    for step, record in zip(data["steps"], log[2:], strict=False):
        if record["type"] == "decision":
            assert step["table"]["hands"][record["seat"]] == record["holding"]
            assert step["table"]["current_seat"] == record["seat"]
    status, out, err = show(capsys, "nope", "--output", tmp_path)
    assert status == 1 and "no game 'nope'" in err and "g1" in err and not out
    status, _, err = show(capsys, "g1", "--output", tmp_path, "--seat", "4")
    assert status == 1 and "--seat 4: the game has seats 0 to 3" in err
    status, _, err = show(capsys, tmp_path / "missing.jsonl")
    assert status == 1 and "no such game log" in err
    garbage = tmp_path / "garbage.jsonl"
    garbage.write_text('{"type": "deal"}\n', encoding="utf-8")
    status, _, err = show(capsys, garbage)
    assert status == 1 and "garbage.jsonl" in err and "game_start" in err and "Traceback" not in err


def test_play_verbose_prints_the_transcript_live(tmp_path: Path) -> None:
    log = tmp_path / "game.jsonl"
    bots = [f"python {SAMPLE_BOTS / 'heuristic_bot.py'}", f"python {SAMPLE_BOTS / 'random_bot.py'}"]
    command = [
        PYTHON,
        "-m",
        "referee.cli",
        "play",
        "--game",
        "stop_the_bus",
        "--seed",
        "4",
        "--verbose",
        "--log",
        str(log),
        "--move-time-ms",
        str(FAST.move_time_ms),
    ]
    for bot in bots:
        command += ["--bot", bot]
    run = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr
    start, steps = read_game(log)
    told = list(transcript_lines(start, steps))
    printed = run.stdout.splitlines()
    assert printed[: len(told)] == told, "--verbose prints what `referee show` tells, line for line"
    assert printed[len(told)].startswith("stop_the_bus seed 4:")  # then the result
    assert sys.executable
