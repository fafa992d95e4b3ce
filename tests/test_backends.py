"""The seam between the league runner and its backends: ``stop`` ends a run early, and resume plays the rest."""

from __future__ import annotations

import asyncio
from pathlib import Path

from referee.apps.league import RESULTS_FILE, run_league
from referee.leaguefile.config import load_league
from referee.records.results import read_records

from .conftest import Bots
from .test_league import without_timing, write_league


def test_stop_is_asked_before_each_game_and_the_rest_is_played_on_resume(tmp_path: Path, bots: Bots) -> None:
    league_path = write_league(tmp_path / "league.yaml", bots)  # 6 games, one at a time
    output = tmp_path / "out"
    asked = []

    def stop() -> bool:
        finished = len(list(read_records(output / RESULTS_FILE)))
        asked.append(finished)
        return finished >= 2

    stopped = asyncio.run(run_league(load_league(league_path), output=output, stop=stop))
    assert (stopped.played, stopped.total) == (2, 6)
    assert asked == [0, 1, 2]  # before each game, once that before it was recorded
    assert stopped.standings.games == 2  # the leaderboards of the games played

    resumed = asyncio.run(run_league(load_league(league_path), output=output))
    assert (resumed.played, resumed.already_finished) == (4, 2)
    whole = asyncio.run(run_league(load_league(league_path), output=tmp_path / "whole"))
    assert whole.played == 6
    assert without_timing(output) == without_timing(tmp_path / "whole")
