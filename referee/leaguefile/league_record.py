"""``league.json`` written: the league file as the results depend on it (read by :mod:`referee.records.results`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee import __version__
from referee.common.atomic import replace_json
from referee.leaguefile.config import League, league_fingerprint, league_identity
from referee.records.results import LEAGUE_FILE, LEAGUE_RECORD_VERSION, read_league, seed_text


def write_league(
    output: Path,
    league: League,
    playing: League,
    scheduled: int | None = None,
    submissions: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Write ``league.json``: the league file as the results depend on it, the bots that play, the games scheduled.

    Its ``entries`` are the bots' season fields (status, reason, replaces, author); what changed in them since the
    last ``league.json`` is appended to its ``changes``, one line each, with the time it was noticed. A ladder
    gives its ``submissions``: each author's versions as judged, accepted or rejected (the pages show them).
    """
    from referee.leaguefile.config.bot_entries import entry_changes, season_entries

    previous = read_league(output)
    entries = season_entries(league.bots)
    noticed = datetime.now(UTC).isoformat(timespec="seconds")
    changes = [*(previous.changes if previous else ()), *(
        {"at": noticed, "what": what} for what in entry_changes(previous.entries if previous else {}, entries)
    )]  # fmt: skip
    identity = league_identity(league)
    identity["rules"] = {**identity["rules"], "seed": seed_text(league.seed)}
    timing = league.timing
    settings = {
        "seed": seed_text(league.seed),
        "table_size": league.table_size,
        "rounds": league.rounds,
        "turn_limit": league.turn_limit,
        "timing": {
            "move_time_ms": timing.move_time_ms,
            "time_bank_ms": timing.time_bank_ms,
            "grace_ms": timing.grace_ms,
        },
        "fault_policy": {"mode": league.fault_policy.mode.value, "max_faults": league.fault_policy.max_faults},
    }
    replace_json(
        output / LEAGUE_FILE,
        {
            "record_version": LEAGUE_RECORD_VERSION,
            "name": league.name,
            "source": str(league.source),
            "game": league.game,
            "bots": list(playing.bot_names),  # the standings' rows: bots whose build failed are left out
            "fingerprint": league_fingerprint(league),
            "league": identity,
            "started": (previous.started if previous else None) or datetime.now(UTC).isoformat(timespec="seconds"),
            "referee_version": __version__,
            "settings": settings,  # what the league's page shows of its settings
            **({"scheduled": scheduled} if scheduled is not None else {}),  # once all are played, pages show the seed
            **({"entries": entries} if entries else {}),
            **({"changes": changes} if changes else {}),
            **({"submissions": [dict(author) for author in submissions]} if submissions else {}),
        },
    )
