"""Replay pages and the league's page: frames checked against the log and the engine, sizes, live rewriting."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import json
import math
import random
import re
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import grpc
import httpx
import numpy as np
import pytest

from referee.apps.league import run_league
from referee.cli import main as referee_main
from referee.engine.games.game import Action
from referee.leaguefile.config import load_league
from referee.play.session import decision_action
from referee.play.transport import status_text, v1_fault
from referee.protocol.faults import BotFault, without_bot_words
from referee.publish.files import html_leaderboard, leaderboard_data
from referee.publish.league_page import page_data_of as league_data_of
from referee.publish.league_page import strength_history
from referee.publish.live import LiveSite
from referee.publish.replay_page import page_data, page_data_of, replay_page
from referee.records.gamelog import log_files, log_path, log_text, new_game
from referee.records.standings import FolderStandings, compute_standings, history_counts
from referee.records.standings import tally as standings_tally
from referee.records.transcript import read_game
from referee.records.visibility import DealsInPlay
from referee.v2 import bot_pb2 as pb

from .conftest import BAD_BOTS, PYTHON, SAMPLE_BOTS, Bots
from .game_logs import logged_game, records, write_league

MAX_PAGE_BYTES = 200_000


def expand(frames: list[dict]) -> list[dict]:
    """The page's frames made whole again, as its script does: each frame's changes on the one before."""
    whole, state = [], {}
    for change in frames:
        state = {**state, **change}
        state = {key: value for key, value in state.items() if value is not None}
        whole.append(state)
    return whole


@pytest.mark.parametrize("name", ["stop_the_bus", "bastard_brag", "faults"])
def test_each_frame_shows_the_cards_the_log_and_the_engine_say(name: str) -> None:
    log = records(name)
    start, steps = read_game(logged_game(name))
    html = replay_page(start, steps)
    data = page_data_of(html)
    assert data == json.loads(json.dumps(page_data(start, steps)))
    frames = expand(data["frames"])
    assert len(frames) == len(log) - 1
    game = new_game(log[0])
    for index, record in enumerate(log[1:]):
        frame = frames[index]
        previous = frames[index - 1] if index else None
        kind = record["type"]
        assert frame["k"] == kind
        if kind == "deal":
            for seat, cards in record["hands"].items():
                assert frame[f"o{seat}"][0] == cards
            if "centre" in record:
                assert frame["centre"] == record["centre"]
            else:
                assert frame["pile"] == record["discard"] and frame["next"] == record["stock"].split()[0]
        elif kind == "decision":
            seat = record["seat"]
            # Before the move: the seat held what the log says it was asked with, and it was its turn.
            assert previous[f"o{seat}"][0] == record["holding"] and previous["cur"] == seat
            hand = game.hand_number
            game.apply(Action.parse(record["action"]))
            ended = game.hand_number != hand or game.is_over
            action = Action.parse(record["action"])
            if "pile" in frame and action.kind.value == "discard":
                assert frame["pile"].split()[0] == str(action.card)  # the discard is on top, even as the hand ends
            if not ended:
                assert frame.get("cur") == game.current_seat
                for other in range(game.num_players):
                    assert frame[f"o{other}"][0] == " ".join(map(str, game.hands[other]))
                if "centre" in frame:
                    assert frame["centre"] == " ".join(map(str, game.centre_by_slot()))
        elif kind == "forfeit":
            game.forfeit(record["seat"], record["reason"])
        elif kind == "hand":
            assert frame["lives"] == record["lives"] and frame.get("loser") == record["loser"]
            assert {seat: shown[0] for seat, shown in frame.get("rev", {}).items()} == record["hands"]
            assert (
                previous["lives"] != record["lives"]
                or record["loser"] is None
                or record["floating"] != previous.get("fl", [0] * len(record["lives"]))
            )
    assert game.is_over


def test_a_replay_page_is_small_and_self_contained(tmp_path: Path, capsys) -> None:
    for name in ("stop_the_bus", "bastard_brag"):
        assert referee_main(["replay", str(logged_game(name)), "-o", str(tmp_path / f"{name}.html")]) == 0
        html = (tmp_path / f"{name}.html").read_text(encoding="utf-8")
        assert len(html.encode()) < MAX_PAGE_BYTES
        # Nothing is fetched: no external script, style, image or font.
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
        assert "@import" not in html and "url(" not in html
    assert "KiB" in capsys.readouterr().out


def test_the_replay_command_names_the_page_after_the_game(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert referee_main(["replay", str(logged_game("stop_the_bus"))]) == 0
    assert (tmp_path / "stop_the_bus.html").is_file()
    assert referee_main(["show", str(logged_game("faults")), "--html", "f.html"]) == 0
    frames = expand(page_data_of((tmp_path / "f.html").read_text())["frames"])
    assert [frame["fault"] for frame in frames if frame["k"] == "fault"] == ["illegal", "illegal"]


# ----- the league ----------------------------------------------------------------------------


def test_a_league_writes_a_replay_per_game_and_a_page_that_links_them(tmp_path: Path, bots: Bots) -> None:
    league = load_league(write_league(tmp_path / "league.yaml", bots.marker))
    league = dataclasses.replace(league, concurrency=2)
    output = tmp_path / "out"
    summary = asyncio.run(run_league(league, output=output))
    results = [json.loads(line) for line in (output / "games.jsonl").read_text().splitlines()]
    assert summary.played == len(results) == 12
    for record in results:
        page = output / "replays" / f"{record['game_id']}.html"
        frames = expand(page_data_of(page.read_text(encoding="utf-8"))["frames"])
        assert sum(frame["k"] == "decision" for frame in frames) == record["decisions"]
    data = league_data_of((output / "leaderboard.html").read_text(encoding="utf-8"))
    assert data["league"]["name"] == "viewer-league" and not data["league"]["live"]
    assert data["league"]["settings"]["seed"] == "21" and data["league"]["settings"]["table_size"] == 3
    assert data["league"]["scheduled"] == 12 and data["league"]["games"] == 12
    assert {row[1] for row in data["games"]} == {record["game_id"] for record in results}
    assert all(row[8] == 2 for row in data["games"]), "every game links its replay, a file (static_replays)"
    # The chart ends at the standings' strengths, after every counted game.
    board = json.loads((output / "leaderboard.json").read_text())
    for row in board["rows"]:
        assert len(data["history"]["strength"][row["bot"]]) == len(data["history"]["games"])
        assert data["history"]["strength"][row["bot"]][-1] == row["strength"]["estimate"]
    assert data["history"]["games"] == list(range(1, board["games"] + 1))
    # Each game's row holds its seats and its finish order as games.jsonl has them.
    by_id = {record["game_id"]: record for record in results}
    for row in data["games"]:
        assert (row[2], row[3]) == (by_id[row[1]]["seats"], by_id[row[1]]["finish_order"])
    # Each fault is listed with its game, decision and, in words, the line of the bot's output it happened at.
    faults = data["faults"]["faulty"]
    assert len(faults) == sum(
        record["faults"][record["seats"].index("faulty")].get("illegal", 0)
        for record in results
        if "faulty" in record["seats"]
    )
    for fault in faults:
        assert fault["kind"] == "illegal" and isinstance(fault["n"], int)
        line, log = re.fullmatch(r"(?:line (\d+)|the start) of (logs/faulty-[\w.-]+\.log)", fault["output"]).groups()
        assert len((output / log).read_text().splitlines()) >= int(line or 0)  # the bot prints nothing: the start
        log = next(
            line
            for line in log_text(log_path(output / "games", fault["game"])).splitlines()
            if '"type":"fault"' in line
        )
        assert json.loads(log)["n"] == fault["n"]


def test_no_bots_output_reaches_the_leagues_pages(tmp_path: Path, bots: Bots) -> None:
    # Two bots think aloud (a secret on stderr at every decision) and fault with it: one sends it as its error,
    # one ends its stream with it. The pages every author may read show the faults, never the secret.
    secret = f"bluff-on-{uuid.uuid4().hex[:10]}"
    entries = [
        ("alpha", [PYTHON, str(SAMPLE_BOTS / "random_bot.py")]),
        ("bravo", [PYTHON, str(SAMPLE_BOTS / "random_bot.py")]),
        ("talker", [PYTHON, str(BAD_BOTS / "chatty.py"), "--fail", "error", "--at", "2", "--every-game"]),
        ("quitter", [PYTHON, str(BAD_BOTS / "chatty.py"), "--fail", "abort", "--at", "3", "--in-game", "1"]),
    ]
    lines = [
        "name: chatty-league",
        "game: stop_the_bus",
        "static_replays: true",
        "seed: 7",
        "table_size: 3",
        "move_time_ms: 1000",
        "time_bank_ms: 2000",
        "concurrency: 2",
        "max_restarts: 20",
        "fault_policy: {mode: default_action, max_faults: 3}",
        "bots:",
    ]
    for name, command in entries:
        lines += [
            f"  - name: {name}",
            f"    command: {json.dumps([*command, '--marker', bots.marker])}",
            f"    env: {{REFEREE_TEST_MARKER: {bots.marker}, CHATTY_SECRET: {secret}}}",
        ]
    (tmp_path / "league.yaml").write_text("\n".join(lines) + "\n")
    output = tmp_path / "out"
    asyncio.run(run_league(load_league(tmp_path / "league.yaml"), output=output))
    # The secret is in what the organiser keeps: the bots' output and the games' logs.
    assert any(secret in log.read_text() for log in (output / "logs").glob("talker-*.log"))
    details = [
        json.loads(line)["detail"]
        for log in log_files(output / "games")
        for line in log_text(log).splitlines()
        if '"type":"fault"' in line
    ]
    assert any(f"could not decide: ValueError: no move fits {secret}" in detail for detail in details), details
    assert any(f"stream broke: INTERNAL: gave up on {secret}" in detail for detail in details), details
    # It is nowhere in what is published.
    for name in ("leaderboard.html", "leaderboard.json", "leaderboard.md", "leaderboard.csv"):
        assert secret not in (output / name).read_text(encoding="utf-8"), f"{name} shows a bot's own words"
    data = league_data_of((output / "leaderboard.html").read_text(encoding="utf-8"))
    talker = data["faults"]["talker"]
    assert talker and {fault["detail"] for fault in talker} == {"the bot could not decide (its own words left out)"}
    for fault in talker:
        assert set(fault) == {"game", "n", "kind", "detail", "output", "replay"}, "no excerpt of the bot's output"
        assert re.fullmatch(r"line [1-9]\d* of logs/talker-[\w.-]+\.log", fault["output"]), fault["output"]
    assert "the stream broke: INTERNAL (its own words left out)" in {
        fault["detail"] for fault in data["faults"]["quitter"]
    }
    # Nor in the replays, nor in anything `referee serve` gives anyone: the game logs and games.jsonl as published.
    replays = sorted((output / "replays").glob("*.html"))
    assert replays and all(secret not in unpacked_text(replay) for replay in replays)
    served = serve_everything(output)
    assert served["games.jsonl"] and any(name.startswith("games/") for name in served)
    assert [name for name, text in served.items() if secret in text] == []
    faulted = [name for name, text in served.items() if name.startswith("games/") and "its own words left out" in text]
    assert faulted, "the faults are told, in the referee's words"


def unpacked_text(replay: Path) -> str:
    """A replay page with its packed data unpacked: what a reader of it sees."""
    text = replay.read_text(encoding="utf-8")
    return text + json.dumps(page_data_of(text))


def serve_everything(output: Path) -> dict[str, str]:
    """Every file of ``output`` that `referee serve` gives an anonymous visitor, by name: what it gives."""
    from referee.apps.site.app import create_app

    async def fetch() -> dict[str, str]:
        transport = httpx.ASGITransport(app=create_app(output))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            answers = {}
            for path in sorted(output.rglob("*")):
                if path.is_file():
                    name = str(path.relative_to(output)).removesuffix(".zst")  # a log is served as JSON lines
                    answer = await client.get("/" + name)
                    if answer.status_code == 200:
                        answers[name] = answer.text
            return answers

    return asyncio.run(fetch())


def test_a_fault_told_on_the_page_keeps_the_referees_words_and_leaves_out_the_bots() -> None:
    with pytest.raises(BotFault) as raised:
        decision_action(pb.Decision(decision_number=4, error="ValueError: my secret plan"), "b")
    assert without_bot_words(raised.value.detail) == "the bot could not decide (its own words left out)"
    assert without_bot_words("the stream broke: INTERNAL: my secret plan") == (
        "the stream broke: INTERNAL (its own words left out)"
    )
    v1 = v1_fault("b", status_text(grpc.StatusCode.UNIMPLEMENTED, "my secret plan"))
    void = f"no bot got to make a decision; b (handshake: {v1.detail}); c (startup: exit code 1)"
    assert without_bot_words(void) == void.replace(": my secret plan", "")
    for kept in ("the stream broke: UNAVAILABLE", "KNOCK is not legal (legal: draw, take QS)", "process exit code 1"):
        assert without_bot_words(kept) == kept


def history_games(count: int) -> list[dict]:
    """Games of five bots at tables of 3, in an order of finishing that is not their schedule's; e joins late."""
    chooser = random.Random(5)
    games = []
    for number in range(count):
        seats = chooser.sample(["a", "b", "c", "d"] if number < count // 2 else ["a", "b", "c", "d", "e"], 3)
        # a stronger than b stronger than c ...: each place drawn with chances 5:4:3:2:1
        order = sorted(range(3), key=lambda seat: -chooser.random() * (5 - "abcde".index(seats[seat])))
        games.append({"index": (number * 7) % count, "game_id": f"g{number}", "seats": seats, "finish_order": order})
    return games


def plackett_luce_elo(orders: list[list[str]]) -> dict[str, float]:
    """The Plackett-Luce fit as docs/statistics.md states it, found another way than referee.records.ranking's.

    The maximum of the log-likelihood of every finish order plus, for each bot, one virtual win and one virtual
    loss against a bot of the field's geometric mean strength, by Newton's method on the log strengths (the
    gradient written out, the Hessian from it by differences), not Hunter's MM; Elo relative to the mean.
    """
    names = sorted({name for order in orders for name in order})
    finish = np.array([[names.index(name) for name in order] for order in orders])  # games x places
    bots = len(names)

    def gradient(theta: np.ndarray) -> np.ndarray:
        strength = np.exp(theta)
        total = np.zeros(bots)
        for place in range(finish.shape[1] - 1):  # each place but the last is a choice among the bots left
            left = finish[:, place:]
            np.add.at(total, finish[:, place], 1.0)
            np.add.at(total, left, -strength[left] / strength[left].sum(axis=1, keepdims=True))
        mean = np.exp(theta.mean())  # the virtual opponent, whose strength moves with every bot's
        return total + 1.0 - 2.0 * strength / (strength + mean) + np.sum(1.0 - 2.0 * mean / (strength + mean)) / bots

    theta = np.zeros(bots)
    for _ in range(50):
        slope = gradient(theta)
        hessian = np.array([(gradient(theta + 1e-6 * unit) - slope) / 1e-6 for unit in np.eye(bots)])
        step = np.linalg.lstsq((hessian + hessian.T) / 2, -slope, rcond=None)[0]  # the mean is free: least squares
        theta += step - step.mean()
        if np.max(np.abs(step)) < 1e-10:
            break
    return {name: float(theta[bot]) * 400 / math.log(10) for bot, name in enumerate(names)}


def test_the_strength_history_is_the_plackett_luce_fit_of_the_games_finished_so_far() -> None:
    games = history_games(150)
    games[3]["void"] = games[40]["void"] = "only one bot got to make a decision"
    names = ["a", "b", "c", "d", "e"]
    history = strength_history(games, names, points=20)
    counted = [game for game in games if "void" not in game]
    assert history["games"] == history_counts(148, 20) == [*range(8, 145, 8), 148]
    for point, count in enumerate(history["games"]):
        # The fit of the first `count` counted games (in the order they finished), found independently. Hunter's
        # MM, recentred on the field's mean at each step, settles a little off the documented maximum while the
        # games are few (here 0.55 Elo at 16 games, under 0.1 from 56 on); the figures shown are rounded to 0.1.
        orders = [[game["seats"][seat] for seat in game["finish_order"]] for game in counted[:count]]
        expected = plackett_luce_elo(orders)
        for name in names:
            shown = history["strength"][name][point]
            assert (shown is None) == (name not in expected), (count, name)
            assert shown is None or abs(shown - expected[name]) < 0.75, (count, name, shown, expected[name])
    assert history["strength"]["e"][0] is None and history["strength"]["e"][-1] is not None, (
        "e has no line until it plays"
    )
    # The last point is the leaderboard's strength, to the digit it shows.
    board = leaderboard_data(compute_standings(games), "t")
    assert {row["bot"]: row["strength"]["estimate"] for row in board["rows"]} == {
        name: values[-1] for name, values in history["strength"].items()
    }


def test_a_page_rewritten_after_more_games_fits_only_the_counts_it_has_not_fitted(tmp_path: Path, monkeypatch) -> None:
    fits: list[int] = []
    real = standings_tally.fit_stages
    monkeypatch.setattr(standings_tally, "fit_stages", lambda *args, **kwargs: fits.append(1) or real(*args, **kwargs))
    games = history_games(300)
    names = ["a", "b", "c", "d", "e"]
    (tmp_path / "league.json").write_text(json.dumps({"name": "history", "bots": names}))
    results = tmp_path / "games.jsonl"
    results.write_text("".join(json.dumps(game) + "\n" for game in games[:250]))
    folder = FolderStandings(tmp_path)
    first = folder.update()[0].history
    assert first is not None and list(first.counts) == history_counts(250)
    # Ten more games: the counts fitted are kept as they were, the one new count fitted (256), and 260 is the
    # standings' own fit.
    fits.clear()
    with results.open("a") as more:
        more.write("".join(json.dumps(game) + "\n" for game in games[250:260]))
    grown = folder.update()[0].history
    assert grown is not None and list(grown.counts) == history_counts(260)
    assert len(fits) == 1 and folder.readings == 1, "one fit, at 256; nothing read again"
    fresh = FolderStandings(tmp_path).update()[0].history
    assert grown == fresh, "what was kept is what a fresh reading gives"
    # Games that are not those the fits were made from (a file rewritten, a bot disqualified): read from nothing.
    changed = [*games[:10], {**games[10], "finish_order": games[10]["finish_order"][::-1]}, *games[11:260]]
    results.write_text("".join(json.dumps(game) + "\n" for game in changed))
    again = folder.update()[0].history
    assert folder.readings == 2 and again == FolderStandings(tmp_path).update()[0].history and again != grown
    assert first.counts[0] == 8 and len(first.counts) <= 60


def test_the_counts_the_history_is_fitted_at_stay_as_a_league_grows() -> None:
    assert history_counts(0) == [] and history_counts(5) == [1, 2, 3, 4, 5] and len(history_counts(60)) == 60
    assert history_counts(61) == [*range(2, 61, 2), 61] and history_counts(20_000)[:2] == [512, 1024]
    before: list[int] = []
    for total in range(1, 5000, 37):
        counts = history_counts(total)
        assert 0 < len(counts) <= 60 and counts[-1] == total and counts == sorted(set(counts))
        # A count up to the last total was fitted then: only the counts beyond it are new.
        assert {count for count in counts if count <= (before or [0])[-1]} <= set(before), total
        before = counts


def test_the_page_of_standings_alone_renders() -> None:
    standings = compute_standings([{"index": 0, "game_id": "g", "seats": ["x", "y"], "placements": [1, 0]}])
    data = league_data_of(html_leaderboard(standings, "a <title>"))
    assert data["league"]["name"] == "a <title>" and [row["bot"] for row in data["board"]["rows"]] == ["y", "x"]
    assert data["games"] == [] and not data["league"]["live"]


def test_the_live_helper_loads_no_fit_until_it_writes_a_leaderboard() -> None:
    # A league's helper process writes its replay pages from the start; the standings, their fit and numpy (0.2 s of
    # CPU to load, all three) only at its first leaderboard, which a league over in less than an interval never asks
    # of it.
    loaded = (
        "import sys, referee.publish.live; print([m for m in ('numpy', 'referee.records.ranking') if m in sys.modules])"
    )
    assert subprocess.run([PYTHON, "-c", loaded], capture_output=True, text=True, check=True).stdout == "[]\n"


def test_live_pages_are_rewritten_at_most_every_interval_and_once_more_after_the_last_game(tmp_path: Path) -> None:
    (tmp_path / "games").mkdir()
    ids = [f"g{i}" for i in range(8)]
    log = records("stop_the_bus")
    with open(tmp_path / "games.jsonl", "w", encoding="utf-8") as results:
        for index, game_id in enumerate(ids):
            shutil.copy(logged_game("stop_the_bus"), tmp_path / "games" / f"{game_id}.jsonl")
            results.write(
                json.dumps(
                    {
                        "index": index,
                        "game_id": game_id,
                        "seats": log[0]["players"],
                        "placements": log[-1]["placements"],
                    }
                )
                + "\n"
            )
    (tmp_path / "games" / "broken.jsonl").write_text("not json\n")
    (tmp_path / "league.json").write_text(json.dumps({"name": "live test", "bots": log[0]["players"]}))

    async def scenario() -> tuple[LiveSite, float]:
        site = LiveSite(tmp_path, 8, deals=DealsInPlay(tmp_path), interval_s=0.5, static_replays=True)
        written = site.leaderboard_written_at

        async def until(condition: Callable[[], bool]) -> None:
            # A loaded machine makes a rewrite (and so the interval after it) longer: wait for it, not a fixed time.
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not condition():
                await asyncio.sleep(0.05)

        site.shown([*ids[:4], "broken"])  # as the run's deals tell them, each once it may be shown
        await until(lambda: len(written) >= 1)
        first_writes = len(written)
        for game_id in ids[4:]:
            site.shown([game_id])
            await asyncio.sleep(0.05)
        last_game = time.monotonic()
        # The trailing write comes without another game, and shows the games of the last interval.
        await until(lambda: len(written) > first_writes and written[-1] > last_game)
        await site.close()
        return site, last_game

    site, last_game = asyncio.run(scenario())
    assert site.replays_written == 8 and sorted(p.stem for p in (tmp_path / "replays").iterdir()) == ids
    writes = site.leaderboard_written_at
    assert len(writes) >= 2, writes
    assert all(later - earlier >= 0.45 for earlier, later in itertools.pairwise(writes))
    assert writes[-1] > last_game, "the games that came in the last interval are shown"
    data = league_data_of((tmp_path / "leaderboard.html").read_text(encoding="utf-8"))
    assert data["league"]["live"] and data["league"]["games"] == 8 and data["league"]["scheduled"] == 8
