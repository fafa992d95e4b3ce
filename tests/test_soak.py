"""The fault soak, short: a league of misbehaving bots beside good ones finishes, records every fault, leaks nothing.

The league, its bots and the checks are bench/soak.py's (which also runs
the long soak, 380 games): here its short league of 11 bots (110 games),
with every fault kind, a bot that forks children (one detached with setsid)
and crashes, and a memory hog under a memory limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bench import soak
from referee.protocol.faults import FaultKind
from tests.conftest import Bots


def test_a_league_of_misbehaving_bots_records_every_fault_and_leaks_nothing(bots: Bots, tmp_path: Path) -> None:
    def command(script: Path, args: Sequence[str]) -> list[str]:
        return bots.command(script, *args)

    misbehaving = soak.soak_bots(quick=True)
    everyone = (*soak.GOOD_BOTS, *misbehaving)
    alone = soak.write_league(tmp_path / "alone.yaml", soak.GOOD_BOTS, command, bots.marker)
    league = soak.write_league(tmp_path / "soak.yaml", everyone, command, bots.marker)

    soak.run(alone, tmp_path / "alone")  # the good bots alone; this also opens grpc's lasting descriptors
    descriptors_before = soak.open_fds()
    summary = soak.run(league, tmp_path / "soak")
    descriptors_after = soak.open_fds()

    assert summary.played == summary.total == len(everyone) * (len(everyone) - 1)
    # Every game's faults are what its bots are scripted to do; so are the standings' counts.
    by_kind, problems = soak.check_faults(tmp_path / "soak", everyone)
    assert problems == []
    assert set(by_kind) == {kind.value for kind in FaultKind}
    assert all(count > 0 for count in by_kind.values())
    # The good bots' games among themselves are exactly those of a league without the bad bots.
    good = [bot.name for bot in soak.GOOD_BOTS]
    compared, problems = soak.compare_good_games(tmp_path / "soak", tmp_path / "alone", good)
    assert problems == []
    assert compared == 6  # three good bots: three tables, two seatings each
    # The forking bot really did start its children, and the memory hog was stopped by its limit.
    fork_logs = [path.read_text() for path in (tmp_path / "soak" / "logs").glob("fork-crash-*.log")]
    assert fork_logs and all("fork.py: started sleeper,detached" in log for log in fork_logs)
    hog_logs = [path.read_text() for path in (tmp_path / "soak" / "logs").glob("memory-hog-*.log")]
    assert hog_logs and not any("the limit was not enforced" in log for log in hog_logs)

    # Nothing is left: no bot process (nor child, nor detached grandchild), socket or descriptor.
    assert bots.leftovers() == []
    assert soak.socket_leftovers(bots.socket_root, tmp_path) == []
    assert descriptors_after <= descriptors_before
