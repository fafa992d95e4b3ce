"""What a ladder's pages show of its submissions: every version judged, accepted or rejected, and why.

The versions are judged as a ladder judges them where that runs no bot (a
``bot.yaml`` without ``run``, a build that fails); the accepted ones are
entered in the register directly, with the built copy a ladder keeps. The
records and pages are then written as ``referee ladder --withdraw`` writes them.
"""

from __future__ import annotations

import asyncio
import json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from referee.apps.ladder.entries import REPORTS_DIR, changed_submissions, judge, submission_verdicts
from referee.apps.ladder.file import Ladder, load_ladder
from referee.apps.ladder.history import Judged, Register
from referee.apps.ladder.run import change_status, ladder_league, write_ladder_league
from referee.apps.league import publish_standings
from referee.leaguefile.submissions import BUILDS_DIR
from referee.protocol.standing import WITHDRAWN
from referee.publish.league_page import page_data_of
from referee.records.results import ACCEPTED, REJECTED, read_league
from tests.conftest import Bots
from tests.test_ladder import author, ladder_file
from tests.test_ladder_suspension import author_page, fragile_author, served_to
from tests.test_site import add_author

NO_RUN = "name: {author}\nversion: '1'\n"
FAILING_BUILD = "name: {author}\nversion: '2'\nbuild: sh build.sh\nrun: [python, bot.py]\n"
BUILD_SCRIPT = "echo 'make: no rule to make target bot' >&2\nexit 2\n"


def submit(ladder: Ladder, register: Register, author: str, manifest: str) -> Judged:
    """Judge the author's folder, holding ``manifest``, as the ladder judges a changed submission."""
    folder = ladder.submissions / author
    folder.mkdir(exist_ok=True)
    (folder / "bot.yaml").write_text(manifest.format(author=author))
    (folder / "build.sh").write_text(BUILD_SCRIPT)
    ((name, changed, digest),) = [change for change in changed_submissions(ladder, register) if change[0] == author]
    # In a thread of its own: the caller may be running an event loop (Playwright's does).
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, judge(ladder, register, name, changed, digest, lambda line: None)).result()


def accept(ladder: Ladder, register: Register, author: str, version: int) -> None:
    """Enter a version as accepted, with the built copy a ladder runs it from (never run here)."""
    bot = f"{author}-v{version}"
    copy = ladder.output / BUILDS_DIR / bot
    copy.mkdir(parents=True)
    (copy / "bot.yaml").write_text(f"name: {author}\nversion: '{version}'\nrun: [python, bot.py]\n")
    (copy / "bot.py").write_text("")
    register.add(Judged(author, version, bot, f"digest-{bot}", ACCEPTED, at=f"2026-01-0{version}T10:00:00+00:00"))


def new_ladder(folder: Path) -> Ladder:
    """A ladder file in ``folder`` with its submissions folder, and the ladder it describes (its output: ``out``)."""
    (folder / "submissions").mkdir(parents=True)
    path = folder / "ladder.yaml"
    path.write_text(
        "name: season\ngame: stop_the_bus\nseed: 8157702950177155349\ntable_size: 3\nsubmissions: submissions\n"
        "output: out\n"
    )
    ladder = load_ladder(path)
    (ladder.output / "logs").mkdir(parents=True)
    return ladder


def season_with_a_new_version(folder: Path) -> Ladder:
    """A ladder of three authors and four versions: newcomer-v2 replaced newcomer-v1 (withdrawn) halfway through.

    Its 24 games (tables of alice-v1, bob-v1 and the newcomer's version then, each in three rotations) are
    recorded as a ladder records them, and its records and pages written as the ladder writes them.
    """
    ladder = new_ladder(folder)
    register = Register(ladder.output)
    try:
        for author, version in (("alice", 1), ("bob", 1), ("newcomer", 1), ("newcomer", 2)):
            accept(ladder, register, author, version)
        write_ladder_league(ladder, register, ladder_league(ladder, register))
    finally:
        register.close()
    games = []
    for index in range(24):
        table, rotation = divmod(index, 3)
        bots = ["alice-v1", "bob-v1", "newcomer-v1" if table < 4 else "newcomer-v2"]
        seats = bots[rotation:] + bots[:rotation]
        games.append(
            {
                "index": index,
                "game_id": f"t{table + 1:04d}-s{rotation}",
                "seed": str(1000 + table),
                "seats": seats,
                "game": "stop_the_bus",
                # The newcomer's second version wins; alice beats bob.
                "finish_order": sorted(
                    range(3), key=lambda seat: ["newcomer-v2", "alice-v1", "bob-v1", "newcomer-v1"].index(seats[seat])
                ),
                "timing": {"started": f"2026-12-03T07:{34 + index // 4:02d}:12.000+00:00", "wall_s": 0.1},
            }
        )
    (ladder.output / "games.jsonl").write_text("".join(json.dumps(game) + "\n" for game in games))
    publish_standings(ladder.output)
    return ladder


def ladder_with_verdicts(folder: Path) -> Ladder:
    """A ladder whose register holds accepted and rejected versions, bob-v1 then withdrawn by the organiser.

    ann-v1, bob-v1 and cat-v1 are accepted; eve-v1 (no run) and eve-v2 (its build fails) rejected, then
    eve-v3 accepted; ann-v2 (no run) rejected.
    """
    ladder = new_ladder(folder)
    register = Register(ladder.output)
    try:
        accept(ladder, register, "ann", 1)
        accept(ladder, register, "bob", 1)
        submit(ladder, register, "eve", NO_RUN)
        accept(ladder, register, "cat", 1)
        submit(ladder, register, "eve", FAILING_BUILD)
        accept(ladder, register, "eve", 3)
        submit(ladder, register, "ann", NO_RUN)
    finally:
        register.close()
    change_status(ladder, "bob-v1", WITHDRAWN, "asked by its author")
    return ladder


def test_league_json_keeps_every_verdict_and_the_pages_show_why_a_version_was_rejected(tmp_path: Path) -> None:
    ladder = ladder_with_verdicts(tmp_path)
    output = ladder.output
    register = Register(output)
    try:
        judged = list(register.judged())
        expected = submission_verdicts(register)
    finally:
        register.close()
    rejected = [version for version in judged if version.verdict == REJECTED]
    assert [version.bot for version in rejected] == ["eve-v1", "eve-v2", "ann-v2"]
    assert all(str(tmp_path) in version.reason for version in rejected), "real reasons name the machine's paths"

    # league.json: each author once, in the order first judged, with their versions in the order judged.
    written = json.loads((output / "league.json").read_text())["submissions"]
    assert written == expected and list(read_league(output).submissions) == written
    assert [author["author"] for author in written] == ["ann", "bob", "eve", "cat"]
    eve = written[2]
    assert eve["page"] == "authors/eve/"  # the author's own page on referee serve
    assert [(v["bot"], v["verdict"], v["status"]) for v in eve["versions"]] == [
        ("eve-v1", REJECTED, None),
        ("eve-v2", REJECTED, None),
        ("eve-v3", ACCEPTED, "active"),
    ]
    assert [v["summary"] for v in eve["versions"]] == ["its bot.yaml is not valid", "its build failed", ""]
    assert written[1]["versions"][0]["status"] == WITHDRAWN, "a status change reaches league.json's submissions"
    # The whole reason (the build's output in it) is in the author's report alone.
    report = json.loads((output / REPORTS_DIR / "eve.json").read_text())
    assert "no rule to make target bot" in report["versions"][1]["reason"]
    assert str(tmp_path) not in json.dumps(report), "the report names no path of the machine"

    # The page and leaderboard.json: the same verdicts, each in the referee's words, never the build's output.
    html = (output / "leaderboard.html").read_text()
    board = json.loads((output / "leaderboard.json").read_text())
    shown = page_data_of(html)["board"]["submissions"]
    assert shown == board["submissions"]
    reasons = {v["bot"]: v["reason"] for author in shown for v in author["versions"]}
    assert (reasons["eve-v1"], reasons["eve-v2"], reasons["ann-v1"]) == (
        "its bot.yaml is not valid",
        "its build failed",
        "",
    )
    assert [a["page"] for a in shown] == [a["page"] for a in written]
    for page in ("leaderboard.html", "leaderboard.json", "leaderboard.md"):
        text = (output / page).read_text()
        assert str(tmp_path) not in text, f"{page} names a path of the machine"
        assert "no rule to make target bot" not in text and "run: missing" not in text, f"{page} tells the whole why"

    # leaderboard.md: the rejected versions alone, each author's newest first, each with what rejected it.
    markdown = (output / "leaderboard.md").read_text()
    section = markdown.split("## Rejected submissions\n", 1)[1]
    items = [line for line in section.splitlines() if line.startswith("- ")]
    assert [item.split(" ")[1] for item in items] == ["ann-v2", "eve-v2", "eve-v1"]
    assert "its bot.yaml is not valid" in items[0] and items[0].endswith("([the author's page](authors/ann/))")
    assert "its build failed" in items[1]
    assert "eve-v3" not in section and "ann-v1" not in section


def test_a_seasons_page_counts_its_authors_and_versions_and_a_leagues_its_bots(tmp_path: Path) -> None:
    season = season_with_a_new_version(tmp_path / "season").output
    league = page_data_of((season / "leaderboard.html").read_text())["league"]
    assert (league["authors"], league["bots"], league["active"]) == (3, 4, 3), "newcomer-v1 was replaced"
    verdicts = ladder_with_verdicts(tmp_path / "verdicts").output
    league = page_data_of((verdicts / "leaderboard.html").read_text())["league"]
    assert (league["authors"], league["bots"], league["active"]) == (4, 4, 3), "bob-v1 was withdrawn"
    # A league's season (bots that replace others: their authors' lines of versions) counts the same way.
    record = json.loads((season / "league.json").read_text())
    del record["submissions"]
    (season / "league.json").write_text(json.dumps(record))
    publish_standings(season)
    league = page_data_of((season / "leaderboard.html").read_text())["league"]
    assert (league["authors"], league["bots"], league["active"]) == (3, 4, 3)
    # A league's page counts bots.
    del record["entries"]
    (season / "league.json").write_text(json.dumps(record))
    publish_standings(season)
    league = page_data_of((season / "leaderboard.html").read_text())["league"]
    assert league["bots"] == 4 and "authors" not in league and "active" not in league


CRASHES_AT_ITS_THIRD_DECISION = """
import os
import random
import sys

from referee.play.kit import run_bot

decisions = 0


def decide(obs):
    global decisions
    decisions += 1
    if decisions == 3:
        print("eve: index out of range in my search", file=sys.stderr, flush=True)
        os._exit(3)
    return random.Random(repr((obs.seat, obs.hand_number, obs.turns_this_hand))).choice(obs.legal_actions)


if __name__ == "__main__":
    run_bot(decide, name="eve", version="1")
"""


def test_an_authors_page_says_what_rejected_a_version_in_plain_words_with_what_they_can_open(
    tmp_path: Path, bots: Bots
) -> None:
    path = ladder_file(tmp_path, bots, {})
    submissions = tmp_path / "submissions"
    eve = author(submissions, "eve", bots)
    (eve / "eve_bot.py").write_text(CRASHES_AT_ITS_THIRD_DECISION)
    (eve / "bot.yaml").write_text(f"name: eve\nversion: '1'\nrun: [python, eve_bot.py, --marker, {bots.marker}]\n")
    fay = fragile_author(submissions, "fay", bots)
    (fay / "broken").write_text("start")  # it exits as it starts
    ladder = load_ladder(path)
    ladder.output.mkdir()
    register = Register(ladder.output)
    try:
        for name, folder, digest in changed_submissions(ladder, register):
            verdict = asyncio.run(judge(ladder, register, name, folder, digest, lambda line: None))
            assert verdict is not None and verdict.verdict == REJECTED, verdict
    finally:
        register.close()
    tokens = {name: add_author(path, name) for name in ("eve", "fay")}

    eve_page = author_page(ladder.output, tokens["eve"], "eve")
    first = eve_page.index("Your newest version, eve-v1, was rejected")
    assert first < eve_page.index("Submit a new version") < eve_page.index("in full")
    assert "crashed: exit code 3 in its check game, at decision" in eve_page, eve_page
    game = "check-stop_the_bus-3-1"
    assert f'href="checks/eve-v1/{game}.html"' in eve_page and f'href="checks/eve-v1/{game}.txt"' in eve_page
    fay_page = author_page(ladder.output, tokens["fay"], "fay")
    assert "could not start in its check: exited with exit code 3 before listening on the address it was given" in (
        fay_page
    )
    assert "fragile: cannot load my model" in fay_page  # that start's output, which no other page holds
    for page in (eve_page, fay_page):  # no file the author cannot open, no path of the machine
        assert "its output is in" not in page and ".log" not in page.replace("builds/", "")
        assert str(tmp_path) not in page and "/run/referee" not in page
    # What the links lead to: the check game's replay and the bot's output in it, the author's to read.
    output = served_to(ladder.output, tokens["eve"], f"authors/eve/checks/eve-v1/{game}.txt")
    assert "eve: index out of range in my search" in output
