"""A ladder whose standings are settled rests: it starts no table until a version arrives, and wakes when one does.

A real ``referee ladder`` process; its console read as it runs. How little
a resting ladder costs is bench/ladder_rest.py's to measure, not a test's.
"""

from __future__ import annotations

import time
from pathlib import Path

from tests.conftest import Bots
from tests.test_ladder import author, ladder_file, lines
from tests.test_ladder_suspension import Running

PLACEMENT = 3
AFTER = 3  # games after its placement: then the ladder rests


def test_a_settled_ladder_rests_and_wakes_when_a_version_arrives(tmp_path: Path, bots: Bots) -> None:
    path = ladder_file(tmp_path, bots, {"ann": "random", "bob": "random", "cat": "random"})
    text = path.read_text().replace("placement_games: 6", f"placement_games: {PLACEMENT}")
    path.write_text(text + f"sandbox: none\nrest:\n  games: {AFTER}\n")  # the rest is the point, not the sandbox
    output = tmp_path / "out"
    running = Running(path, bots)
    try:
        running.wait_for("the ladder resting", lambda: "resting: " in running.text())
        tables = len(lines(output / "tables.jsonl"))
        games = lines(output / "games.jsonl")
        for bot in ("ann-v1", "bob-v1", "cat-v1"):
            assert sum(bot in game["seats"] for game in games) >= PLACEMENT + AFTER
        time.sleep(1.0)  # a few of its polls (0.3 s): nothing is drawn while it rests
        assert len(lines(output / "tables.jsonl")) == tables
        assert len(lines(output / "games.jsonl")) == len(games)

        author(tmp_path / "submissions", "dan", bots)
        running.wait_for("the ladder awake", lambda: "awake: dan-v1 accepted" in running.text())
        running.wait_for("the ladder resting again", lambda: running.text().count("resting: ") == 2)
    finally:
        said = running.stop()
    assert "resting: every active version has played 3 games after its placement (rest: games)" in said
    games = lines(output / "games.jsonl")
    assert sum("dan-v1" in game["seats"] for game in games) >= PLACEMENT + AFTER
    assert said.index("resting: ") < said.index("awake: dan-v1 accepted") < said.rindex("resting: ")
