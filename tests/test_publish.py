"""Tests of the leaderboard files and the console table."""

from __future__ import annotations

import csv
import html
import json
import math
import os
import random
from html.parser import HTMLParser

import pytest

from referee.cli import main
from referee.common import atomic
from referee.engine.seeding import seed_commitment
from referee.publish.console_table import console_table
from referee.publish.files import write_leaderboards
from referee.publish.league_page import page_data_of
from referee.publish.text import comparison_text
from referee.records.standings import compute_standings

HOSTILE_NAME = '<script>alert("x")</script> & |co|'
BOTS = ["alpha", HOSTILE_NAME, "1e3", "dan's bot"]
FILES = ["leaderboard.csv", "leaderboard.html", "leaderboard.json", "leaderboard.md"]
HEADERS = [
    "rank",
    "bot",
    "strength",
    "95%",
    "games",
    "wins",
    "win rate",
    "avg place",
    "score",
    "mean score",
    "timeout",
    "crash",
    "malformed",
    "illegal",
    "stale",
    "startup",
    "handshake",
    "forfeits",
    "median ms",
    "p99 ms",
]
VOID_ELEMENTS = {"meta", "br", "hr", "img", "input", "link"}


def league_records(seed=1, game_count=40):
    """Records of a small league in the games.jsonl format, every bot seated often."""
    chooser = random.Random(seed)
    records = []
    for index in range(game_count):
        seats = chooser.sample(BOTS, 3)
        placements = [0, 1, 2]
        chooser.shuffle(placements)
        records.append(
            {
                "index": index,
                "game_id": f"r0-t{index:03d}-s0",
                "seats": seats,
                "finish_order": placements,
                "faults": [{"timeout": 1} if chooser.random() < 0.3 else {} for _ in seats],
                "forfeits": {},
                "timing": {"latency_ms": [[chooser.uniform(0.2, 30.0) for _ in range(5)] for _ in seats]},
            }
        )
    return records


@pytest.fixture
def standings():
    return compute_standings(league_records(), bots=[*BOTS, "idle"])


class StrictHTMLChecker(HTMLParser):
    """Parse a page, collecting problems (unbalanced tags, external scripts and resources) and cell texts.

    The HTML leaderboard draws itself from data inside the page: its two inline scripts (the data, the
    code) are counted in ``scripts``; a script with a source is a problem.
    """

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.open_tags: list[str] = []
        self.problems: list[str] = []
        self.cell_texts: list[str] = []
        self.scripts = 0
        self._cell: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "script":
            self.scripts += 1
            if any(name == "src" for name, _ in attrs):
                self.problems.append("a <script> with a source")
        for name, value in attrs:
            if name in ("src", "href") or (value and "url(" in value):
                self.problems.append(f"external resource {name}={value!r}")
        if tag not in VOID_ELEMENTS:
            self.open_tags.append(tag)
        if tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag):
        if not self.open_tags or self.open_tags[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.open_tags[-1:] or 'nothing'}")
            return
        self.open_tags.pop()
        if tag in ("td", "th") and self._cell is not None:
            self.cell_texts.append("".join(self._cell))
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell.append(data)


def check_html(text):
    checker = StrictHTMLChecker()
    checker.feed(text)
    checker.close()
    assert not checker.problems, checker.problems
    assert not checker.open_tags, f"unclosed tags {checker.open_tags}"
    return checker


def test_every_file_is_written_and_parses_with_every_bot(tmp_path, standings):
    written = write_leaderboards(standings, tmp_path / "out", "Spring league")
    assert sorted(path.name for path in written) == FILES
    assert sorted(os.listdir(tmp_path / "out")) == FILES
    every_bot = {*BOTS, "idle"}

    with open(tmp_path / "out" / "leaderboard.csv", newline="", encoding="utf-8") as handle:
        csv_rows = list(csv.DictReader(handle))
    assert {row["bot"] for row in csv_rows} == every_bot
    ranks = [int(row["rank"]) for row in csv_rows]
    assert ranks == sorted(ranks) and ranks[0] == 1
    assert all(int(row["rank_best"]) <= int(row["rank"]) <= int(row["rank_worst"]) for row in csv_rows)

    data = json.loads((tmp_path / "out" / "leaderboard.json").read_text(encoding="utf-8"))
    assert [row["bot"] for row in data["rows"]] == [row.bot for row in standings.rows]
    assert set(data["head_to_head"]) == every_bot
    assert data["title"] == "Spring league"

    page = (tmp_path / "out" / "leaderboard.html").read_text(encoding="utf-8")
    assert check_html(page).scripts == 2
    assert every_bot == {row["bot"] for row in page_data_of(page)["board"]["rows"]}

    markdown = (tmp_path / "out" / "leaderboard.md").read_text(encoding="utf-8")
    assert markdown.startswith("# Spring league\n")
    assert "`referee compare`" in markdown and "\\`" not in markdown, "the notes are Markdown: code shows as code"
    for bot in ["alpha", "1e3", "idle"]:
        assert f"| {bot} " in markdown


def test_csv_and_json_figures_agree_with_the_standings(tmp_path, standings):
    write_leaderboards(standings, tmp_path, "League")
    data = json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))
    with open(tmp_path / "leaderboard.csv", newline="", encoding="utf-8") as handle:
        csv_rows = {row["bot"]: row for row in csv.DictReader(handle)}
    for row, json_row in zip(standings.rows, data["rows"], strict=True):
        assert json_row["games"] == row.games == int(csv_rows[row.bot]["games"])
        assert json_row["wins"] == row.wins == int(csv_rows[row.bot]["wins"])
        assert json_row["rank"] == row.rank == int(csv_rows[row.bot]["rank"])
        assert json_row["rank_range"] == list(row.rank_range)
        assert (int(csv_rows[row.bot]["rank_best"]), int(csv_rows[row.bot]["rank_worst"])) == row.rank_range
        if row.strength is None:
            assert json_row["strength"] is None and csv_rows[row.bot]["strength"] == ""
        else:
            strength = (json_row["strength"]["estimate"], json_row["strength"]["low"], json_row["strength"]["high"])
            assert strength == pytest.approx((row.strength, row.strength_low, row.strength_high), abs=0.05)
            assert float(csv_rows[row.bot]["strength"]) == pytest.approx(row.strength, abs=0.05)
        assert json_row["faults"] == row.faults
        assert int(csv_rows[row.bot]["faults_timeout"]) == row.faults["timeout"]
        for other, pair in standings.head_to_head[row.bot].items():
            cell = json_row_pair(data, row.bot, other)
            assert (cell["games"], cell["above"], cell["deals"]) == (pair.games, pair.above, pair.deals)
            if pair.games == 0:
                assert cell["above_rate"] is None and cell["elo"] is None and cell["los"] is None
                continue
            assert cell["los"] == pytest.approx(pair.los, abs=1e-4)
            for figure in ("above_rate", "score_difference", "elo"):
                interval = getattr(pair, figure)
                for end in ("estimate", "low", "high"):
                    value = getattr(interval, end)
                    # Elo ends the data cannot bound are infinite: null in the JSON.
                    expected = None if math.isinf(value) else pytest.approx(value, abs=0.05)
                    assert cell[figure][end] == expected, (row.bot, other, figure, end)
    assert data["confidence_level"] == 0.95
    idle = csv_rows["idle"]
    assert (idle["games"], idle["win_rate"], idle["median_ms"]) == ("0", "", "")


def json_row_pair(data, bot, other):
    return data["head_to_head"][bot][other]


def test_json_is_deterministic_and_rounded(tmp_path):
    records = league_records()
    write_leaderboards(compute_standings(records), tmp_path / "first", "League")
    random.Random(9).shuffle(records)
    write_leaderboards(compute_standings(records), tmp_path / "second", "League")
    first = (tmp_path / "first" / "leaderboard.json").read_bytes()
    assert first == (tmp_path / "second" / "leaderboard.json").read_bytes()

    def floats(value):
        if isinstance(value, float):
            yield value
        elif isinstance(value, dict):
            for item in value.values():
                yield from floats(item)
        elif isinstance(value, list):
            for item in value:
                yield from floats(item)

    def refuse(constant):
        raise AssertionError(f"{constant} is not JSON")

    for number in floats(json.loads(first, parse_constant=refuse)):
        assert number == round(number, 4), f"{number} has more than 4 decimals"


def test_special_characters_in_names_are_escaped(tmp_path, standings):
    write_leaderboards(standings, tmp_path, 'League <b>"one"</b>')
    page = (tmp_path / "leaderboard.html").read_text(encoding="utf-8")
    assert "<script>alert" not in page and "</script> &" not in page
    assert "<b>" not in page
    assert "<title>" + html.escape('League <b>"one"</b>', quote=True) in page
    checker = check_html(page)
    assert checker.scripts == 2
    # The names reach the page's script as data (drawn as text: see tests/test_browser.py).
    assert HOSTILE_NAME in {row["bot"] for row in page_data_of(page)["board"]["rows"]}

    markdown = (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    assert "<script>" not in markdown
    table_lines = [line for line in markdown.splitlines() if line.startswith("|")]
    header_pipes = table_lines[0].count("|") - table_lines[0].count("\\|")
    for line in table_lines[: 2 + len(standings.rows)]:
        # An unescaped "|" in a name would split its cell and add a column.
        assert line.count("|") - line.count("\\|") == header_pipes, line


def test_rewriting_replaces_files_and_leaves_no_temporary_files(tmp_path, standings):
    write_leaderboards(standings, tmp_path, "First title")
    write_leaderboards(standings, tmp_path, "Second title")
    assert sorted(os.listdir(tmp_path)) == FILES
    assert "Second title" in (tmp_path / "leaderboard.md").read_text(encoding="utf-8")
    assert json.loads((tmp_path / "leaderboard.json").read_text(encoding="utf-8"))["title"] == "Second title"


def test_failed_replacement_keeps_the_old_file_and_removes_the_temporary(tmp_path, standings, monkeypatch):
    write_leaderboards(standings, tmp_path, "Old title")
    old_json = (tmp_path / "leaderboard.json").read_bytes()
    real_replace = os.replace

    def failing_replace(source, destination):
        if str(destination).endswith("leaderboard.json"):
            raise OSError(f"disk full while replacing {destination}")
        real_replace(source, destination)

    monkeypatch.setattr(atomic.os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        write_leaderboards(standings, tmp_path, "New title")
    assert (tmp_path / "leaderboard.json").read_bytes() == old_json
    assert sorted(os.listdir(tmp_path)) == FILES


def test_console_table_has_the_main_columns_and_every_bot(standings):
    table = console_table(standings)
    header_line = table.splitlines()[0]
    # The files hold every column; the console the main ones, with the fault kinds folded into one.
    for header in ["rank", "bot", "strength", "95%", "games", "mean score", "median ms", "faults"]:
        assert header in header_line, f"column {header!r} missing from {header_line!r}"
    wide = console_table(standings, width=200)  # at 100 columns, the longest name is cut
    for bot in [*BOTS, "idle"]:
        assert bot in wide
    assert len(table.splitlines()) == 2 + len(standings.rows)


def games_in_turn(names: list[str], count: int) -> list[dict]:
    """``count`` two-seat games, each bot of ``names`` in turn beating the next."""
    return [
        {
            "index": index,
            "game_id": f"g{index}",
            "seats": [names[index % len(names)], names[(index + 1) % len(names)]],
            "finish_order": [0, 1],
        }
        for index in range(count)
    ]


def test_console_table_cuts_a_long_name_in_its_middle_so_that_its_version_still_shows():
    names = ["a-rather-long-bot-name-v1", "a-rather-long-bot-name-v2", "short"]
    games = games_in_turn(names, 6)
    lines = console_table(compute_standings(games), width=72).splitlines()
    assert max(len(line) for line in lines) <= 72, "the names are cut to fit"
    assert sorted(line.split()[1] for line in lines[2:]) == ["a-rat\u2026ame-v1", "a-rat\u2026ame-v2", "short"]


def test_console_table_shows_control_characters_as_escapes():
    standings = compute_standings([], bots=["evil\x1b[2Jbot"])
    table = console_table(standings)
    assert "\x1b" not in table
    assert "evil\\x1b[2Jbot" in table


def test_names_that_look_like_numbers_are_shown_as_written():
    standings = compute_standings([], bots=["1e3", "007"])
    table = console_table(standings)
    assert "1e3" in table and "007" in table, table


def test_comparison_text_gives_counts_intervals_and_the_stronger_bot():
    # alpha finishes first in every game, beta last: one deal per game (no seeds).
    records = []
    for index, seats in enumerate([["alpha", "beta"], ["beta", "alpha"]] * 5):
        placements = [seats.index("alpha"), seats.index("beta")]
        records.append({"index": index, "game_id": f"g{index}", "seats": seats, "placements": placements})
    standings = compute_standings(records)
    text = comparison_text("alpha", "beta", standings.comparison("alpha", "beta"))
    lines = text.splitlines()
    assert lines[0] == "alpha against beta: 10 shared games on 10 deals"
    assert "finished above: 10, below: 0" in lines[1]
    assert "mean score difference: +1.000 [" in text and "elo +inf [" in text
    assert "alpha is the stronger bot with likelihood" in lines[-1]
    reverse = comparison_text("beta", "alpha", standings.comparison("beta", "alpha"))
    assert "finished above: 0, below: 10" in reverse and "alpha is the stronger bot" in reverse
    idle = compute_standings(records, bots=["alpha", "beta", "idle"])
    assert comparison_text("idle", "alpha", idle.comparison("idle", "alpha")) == "idle and alpha shared no game."
    assert "\x1b" not in comparison_text("evil\x1b[2J", "alpha", idle.comparison("idle", "alpha"))


def test_comparison_text_names_no_stronger_bot_while_the_elo_interval_spans_zero():
    # alpha above in 6 of 10 games: the likelihood of superiority leans its way, the interval does not decide.
    records = []
    for index in range(10):
        seats = ["alpha", "beta"] if index % 2 else ["beta", "alpha"]
        winner = "alpha" if index < 6 else "beta"
        placements = [seats.index(winner), seats.index("beta" if winner == "alpha" else "alpha")]
        records.append({"index": index, "game_id": f"g{index}", "seats": seats, "placements": placements})
    comparison = compute_standings(records).comparison("alpha", "beta")
    assert comparison.elo.low < 0 < comparison.elo.high and comparison.los > 0.5
    last = comparison_text("alpha", "beta", comparison).splitlines()[-1]
    assert last == (
        f"  likelihood of superiority: {comparison.los:.1%}; the order of alpha and beta is not established: "
        "the elo interval spans 0."
    )
    assert "stronger" not in comparison_text("beta", "alpha", comparison.swapped())


def write_results(directory, records, bots):
    directory.mkdir()
    (directory / "league.json").write_text(json.dumps({"name": "Spring league", "bots": bots}), encoding="utf-8")
    (directory / "games.jsonl").write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")


def test_compare_command_prints_the_comparison_from_a_results_directory(tmp_path, capsys):
    records = league_records()
    write_results(tmp_path / "results", records, BOTS)
    assert main(["compare", str(tmp_path / "results"), "alpha", "1e3"]) == 0
    expected = comparison_text("alpha", "1e3", compute_standings(records, bots=BOTS).comparison("alpha", "1e3"))
    assert capsys.readouterr().out == expected + "\n"

    assert main(["compare", str(tmp_path / "results"), "alpha", "gamma"]) == 1
    error = capsys.readouterr().err
    assert error.startswith("referee compare: no bot named 'gamma' in these results; the bots are ")
    assert main(["compare", str(tmp_path / "results"), "alpha", "alpha"]) == 1
    assert "cannot compare bot 'alpha' with itself" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "nowhere"), "alpha", "1e3"]) == 1
    assert "no league.json here" in capsys.readouterr().err


@pytest.mark.parametrize(("scheduled", "shows_seed"), [(None, False), (10_000, False), (1, True)])
def test_the_page_shows_the_seeds_commitment_until_every_game_is_played(tmp_path, standings, scheduled, shows_seed):
    seed = 16045690984503098046
    (tmp_path / "league.json").write_text(json.dumps({"name": "l", "settings": {"seed": seed, "table_size": 3}}))
    for record in league_records():  # the page counts the games it is given against `scheduled`
        with open(tmp_path / "games.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
    write_leaderboards(standings, tmp_path, "l", scheduled=scheduled)
    settings = page_data_of((tmp_path / "leaderboard.html").read_text(encoding="utf-8"))["league"]["settings"]
    if shows_seed:
        assert settings["seed"] == str(seed) and "seed_commitment" not in settings, "a string: exact in JavaScript"
    else:
        assert "seed" not in settings and settings["seed_commitment"] == seed_commitment(seed)
        assert str(seed) not in (tmp_path / "leaderboard.html").read_text(encoding="utf-8")
