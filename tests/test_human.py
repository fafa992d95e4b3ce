"""`referee play --human SEAT` driven through a pseudo-terminal: a person's whole game against real bots.

The test types at the terminal what a person would (a number for each move), reads every screen, and
checks them against the game's log: each screen showed the seat's own cards and no other seat's hidden
ones, offered the legal actions the log records, and the move typed is the move played.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

import pexpect
import pytest

from referee.engine.cards import parse_cards
from referee.engine.games.game import Action
from tests.conftest import SAMPLE_BOTS, Bots, read_log

CLEAR = "\x1b[H\x1b[2J"
PROMPT = r"Your move \(1-(\d+), or q to leave\): "
TURN_TIMEOUT_S = 30
PEOPLE_CARD = r"(?:10|[2-9JQKA])[♣♦♥♠]"  # a card as a person reads it: 10♥, never TH
COMPACT_CARD = re.compile(r"(?<![\w#])[2-9TJQKA][CDHS](?!\w)")  # the logs' and bots' form


def spawn(bots: Bots, tmp_path: Path, *options: str) -> pexpect.spawn:
    commands = [shlex.join(bots.command(SAMPLE_BOTS / f"{name}_bot.py")) for name in ("random", "heuristic")]
    argv = [
        "-m",
        "referee.cli",
        "play",
        *options,
        "--bot",
        commands[0],
        "--bot",
        commands[1],
        "--log",
        str(tmp_path / "game.jsonl"),
    ]
    return pexpect.spawn(
        sys.executable, argv, env=bots.subprocess_env(), encoding="utf-8", timeout=TURN_TIMEOUT_S, dimensions=(60, 110)
    )


def test_a_whole_game_played_as_a_human_seat_shows_that_seat_and_plays_what_is_typed(bots: Bots, tmp_path) -> None:
    terminal = spawn(bots, tmp_path, "--human", "1", "--game", "stop_the_bus", "--seed", "5", "--turn-limit", "30")
    screens: dict[int, str] = {}
    typed: dict[int, str] = {}
    while terminal.expect([PROMPT, pexpect.EOF]) == 0:
        screen = terminal.before
        # Each turn is one screen, drawn afresh: the terminal is cleared, nothing scrolls on from the last.
        assert screen.count(CLEAR) == 1, screen
        screen = screen.split(CLEAR)[1]
        number = int(re.search(r"- decision (\d+) -", screen)[1])
        options = dict(re.findall(r"^\s+(\d+)  (.+?)\s*$", screen.split("-" * 64)[-1], re.MULTILINE))
        assert len(options) == int(terminal.match[1])
        # Stop the bus once a few turns have passed (the game ends sooner); otherwise the first action.
        choice = next((key for key, label in options.items() if label == "stop the bus" and len(screens) > 2), "1")
        screens[number], typed[number] = screen, options[choice]
        terminal.sendline(choice)
    ending = terminal.before
    terminal.close()
    assert terminal.exitstatus == 0, ending

    log = read_log(tmp_path / "game.jsonl")
    # Each bot is named after its program and its seat: the bot after the person's seat sits at seat 2.
    assert [name.rpartition("#")[2] for name in log[0]["players"]] == ["0", "you", "2"], log[0]["players"]
    mine = [record for record in log if record["type"] == "decision" and record["seat"] == 1]
    assert sorted(screens) == [record["n"] for record in mine], "one screen for each of the seat's decisions"
    for record in mine:
        screen = screens[record["n"]]
        held = [card.pretty for card in parse_cards(record["holding"])]
        hand_line = re.search(r"^Your hand: (.+)$", screen, re.MULTILINE)[1]
        assert all(card in hand_line for card in held), (record, hand_line)
        assert len(re.findall(r"^\s+\d+  ", screen, re.MULTILINE)) == len(record["legal"])
        assert typed[record["n"]].split(",")[0].split()[0] == record["action"].split()[0], (typed, record)
        if record["action"].startswith("discard"):
            assert Action.parse(typed[record["n"]].split(",")[0]) == Action.parse(record["action"])
        assert not COMPACT_CARD.search(screen), screen
    # The first screen names no card of another seat's hand that it could not see.
    first = screens[mine[0]["n"]]
    deal = next(record for record in log if record["type"] == "deal")
    public = set(re.findall(rf"(?:discards|takes) ({PEOPLE_CARD})", first))
    public |= set(re.findall(rf"({PEOPLE_CARD}) is turned up", first))
    hidden = {card.pretty for seat, cards in deal["hands"].items() if seat != "1" for card in parse_cards(cards)}
    assert not {card for card in hidden - public if re.search(rf"(?<!\w){card}", first)}, first
    # The last screen: the game's end, with the placings the log records.
    (end,) = [record for record in log if record["type"] == "game_end"]
    assert "Game over after" in ending and "Placings: " in ending
    places = re.search(r"Placings: (.+)", ending)[1]
    assert [int(seat) for seat in re.findall(r"\d+\. seat (\d+)", places)] == end["placements"]


def test_leaving_at_the_first_prompt_ends_the_game_and_its_bots(bots: Bots, tmp_path) -> None:
    terminal = spawn(
        bots,
        tmp_path,
        "--human",
        "0",
        "--game",
        "bastard_brag",
        "--seed",
        "2",
        "--bot",
        shlex.join(bots.command(SAMPLE_BOTS / "random_bot.py")),
    )
    terminal.expect(PROMPT)
    assert "Centre: ?? ?? face down" in terminal.before and "Your hand: " in terminal.before
    terminal.sendline("x")  # not a move: asked again
    terminal.expect(r"Type a number from 1 to \d+ \(or an action such as (.+?)\), or q to leave")
    example = terminal.match[1]
    assert Action.parse(example) and not COMPACT_CARD.search(example), "an example to type, its card as shown"
    terminal.sendline("q")
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 1
    assert "referee play: you left the game" in terminal.before
    assert bots.leftovers() == []


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--human", "3"], "--human 3: the game has seats 0 to 2"),
        (["--human", "0", "--verbose"], "--verbose shows every seat's cards"),
    ],
)
def test_a_human_seat_that_cannot_be_is_a_usage_error(bots: Bots, tmp_path, options, message) -> None:
    terminal = spawn(bots, tmp_path, *options, "--game", "stop_the_bus")
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 2 and message in terminal.before
