"""Game logs on disk: stored compressed and read by every reader, old plain logs still read, and keep_logs.

One real league (``referee run``, random bots in their sandbox) is played for the module; each test reads its
folder (or a copy of it) with the real commands and a real ``referee serve``.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from referee.apps.league import RESULTS_FILE
from referee.cli import main as referee_main
from referee.records.gamelog import (
    COMPRESSED_SUFFIX,
    game_dictionary,
    log_files,
    log_game_id,
    log_text,
    read_log,
    verify_log,
)
from referee.records.luck import game_luck
from referee.records.results import read_records
from referee.records.retention import Retention
from referee.records.visibility import Shown

from .conftest import PYTHON, SAMPLE_BOTS, Bots
from .test_league import write_league
from .test_serve import free_port, wait_until_serving

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def play_league(folder: Path, bots: Bots, extra: str = "", rounds: int = 1) -> Path:
    """A league of three random bots at tables of two, played by ``referee run``; its output folder."""
    path = write_league(folder / "league.yaml", bots, extra=extra, rounds=rounds, concurrency=2)
    run = subprocess.run([PYTHON, "-m", "referee", "run", str(path), "--no-progress"], capture_output=True, text=True,
                         timeout=300, env=bots.subprocess_env())  # fmt: skip
    assert run.returncode == 0, run.stderr
    return folder / "results"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    from .conftest import Bots as BotsClass

    folder = tmp_path_factory.mktemp("stored")
    bots = BotsClass(tmp_path_factory.mktemp("sockets"))
    try:
        yield play_league(folder, bots)
    finally:
        bots.kill_leftovers()


def serve(output: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    server = subprocess.Popen([PYTHON, "-m", "referee", "serve", str(output), "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    wait_until_serving(base)
    return server, base


def stop(server: subprocess.Popen[bytes]) -> None:
    server.send_signal(signal.SIGINT)
    server.wait(timeout=10)


def test_a_leagues_logs_are_stored_compressed_with_their_games_dictionary(league: Path) -> None:
    logs = sorted((league / "games").iterdir())
    records = list(read_records(league / RESULTS_FILE))
    assert [path.name for path in logs] == sorted(f"{record['game_id']}{COMPRESSED_SUFFIX}" for record in records)
    text = log_text(logs[0])
    data = logs[0].read_bytes()
    assert data.startswith(ZSTD_MAGIC) and len(data) * 4 < len(text.encode())  # a Zstandard frame, a quarter or less
    assert int.from_bytes(data[5:7], "little") == game_dictionary("stop_the_bus")  # its dictionary's id, named
    assert json.loads(text.splitlines()[0])["type"] == "game_start"


def test_every_reader_reads_a_compressed_log(league: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = log_files(league / "games")[0]
    game_id = log_game_id(log)
    assert verify_log(log) == []
    assert referee_main(["verify", str(log)]) == 0
    # A person may name it as logs were named before they were compressed: games/ID.jsonl finds games/ID.jsonl.zst.
    assert referee_main(["verify", str(league / "games" / f"{game_id}.jsonl")]) == 0
    capsys.readouterr()
    assert referee_main(["show", game_id, "--output", str(league)]) == 0
    assert len(capsys.readouterr().out.splitlines()) > 10  # a line a step
    assert referee_main(["replay", str(log), "-o", str(tmp_path / "page.html")]) == 0
    assert (tmp_path / "page.html").stat().st_size > 1000
    assert referee_main(["export", str(league), "--trajectories", str(tmp_path / "decisions.jsonl")]) == 0
    exported = {json.loads(line)["game_id"] for line in (tmp_path / "decisions.jsonl").open()}
    assert exported == {log_game_id(path) for path in log_files(league / "games")}
    assert len(game_luck(league, game_id)) == 2


def test_referee_serve_answers_a_compressed_log_as_json_lines(league: Path) -> None:
    server, base = serve(league)
    try:
        shown = [record["game_id"] for record in Shown.read(league).records(league)]
        game_id = shown[0]
        answer = httpx.get(f"{base}/games/{game_id}.jsonl", timeout=10)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/x-ndjson")
        served = [json.loads(line) for line in answer.text.splitlines()]
        logged = read_log(league / "games" / f"{game_id}{COMPRESSED_SUFFIX}")
        assert [record["type"] for record in served] == [record["type"] for record in logged]
        assert served[-1]["placements"] == logged[-1]["placements"]
        page = httpx.get(f"{base}/replays/{game_id}.html", timeout=30)
        assert page.status_code == 200 and "<html" in page.text
    finally:
        stop(server)


def test_logs_written_before_they_were_compressed_are_still_read(league: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    shutil.copytree(league, old)
    for log in log_files(old / "games"):  # every log as a referee before wrote it: plain JSON lines
        log.with_name(log.name.removesuffix(".zst")).write_text(log_text(log), encoding="utf-8")
        log.unlink()
    plain = log_files(old / "games")
    assert plain and all(path.name.endswith(".jsonl") for path in plain)
    game_id = log_game_id(plain[0])
    assert verify_log(plain[0]) == []
    assert referee_main(["verify", str(old / "games" / f"{game_id}{COMPRESSED_SUFFIX}")]) == 0  # named either way
    assert referee_main(["show", game_id, "--output", str(old)]) == 0
    assert len(game_luck(old, game_id)) == 2
    server, base = serve(old)
    try:
        answer = httpx.get(f"{base}/games/{game_id}.jsonl", timeout=10)
        assert answer.status_code == 200 and json.loads(answer.text.splitlines()[0])["type"] == "game_start"
        assert httpx.get(f"{base}/replays/{game_id}.html", timeout=30).status_code == 200
    finally:
        stop(server)


def test_a_log_compressed_with_a_dictionary_not_shipped_is_refused_by_name(
    league: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import zstandard

    lines = [line.encode() for path in log_files(league / "games") for line in log_text(path).splitlines()]
    foreign = zstandard.train_dictionary(8192, lines, dict_id=77777)  # as a newer referee's might be
    log = tmp_path / f"g{COMPRESSED_SUFFIX}"
    log.write_bytes(
        zstandard.ZstdCompressor(dict_data=foreign).compress(log_text(log_files(league / "games")[0]).encode())
    )
    assert referee_main(["verify", str(log)]) == 1
    said = capsys.readouterr().err
    assert (
        "compressed with dictionary 77777, which this referee does not ship" in said and "1001 (stop_the_bus.1" in said
    )


# ----- keep_logs ----------------------------------------------------------------------------------------------


def test_keep_logs_keeps_each_bots_last_games_and_serve_says_the_others_are_no_longer_kept(
    tmp_path: Path, bots: Bots
) -> None:
    output = play_league(tmp_path, bots, extra="keep_logs: 2", rounds=2)  # 12 games, each bot in 8
    records = list(read_records(output / RESULTS_FILE))
    assert len(records) == 12  # records for every game
    last: dict[str, list[str]] = {}
    for record in records:  # in the order they were recorded
        for bot in record["seats"]:
            last.setdefault(bot, []).append(record["game_id"])
    kept = {game_id for games in last.values() for game_id in games[-2:]}
    assert {log_game_id(path) for path in log_files(output / "games")} == kept
    retention = Retention.of(output, 2)
    assert (
        retention is not None and {record["game_id"] for record in records if retention.kept(record["game_id"])} == kept
    )
    pruned = sorted({record["game_id"] for record in records} - kept)
    server, base = serve(output)
    try:
        for game_id in pruned[:2]:
            for path in (f"/games/{game_id}.jsonl", f"/replays/{game_id}.html"):
                answer = httpx.get(base + path, timeout=10)
                assert answer.status_code == 404 and answer.text.startswith("no longer kept"), (path, answer.text)
        answer = httpx.get(f"{base}/games/{sorted(kept)[0]}.jsonl", timeout=10)
        assert answer.status_code == 200
    finally:
        stop(server)


def test_a_lower_keep_logs_prunes_what_an_earlier_run_kept(tmp_path: Path, bots: Bots) -> None:
    output = play_league(tmp_path, bots)  # 6 games, every log kept
    assert len(log_files(output / "games")) == 6
    retention = Retention.of(output, 1)  # as the next run with keep_logs: 1 starts
    assert retention is not None and retention.removed == 6 - len(log_files(output / "games"))
    last = {bot: record["game_id"] for record in read_records(output / RESULTS_FILE) for bot in record["seats"]}
    assert {log_game_id(path) for path in log_files(output / "games")} == set(last.values())  # each bot's last


def test_keep_logs_is_a_whole_number_of_at_least_one(tmp_path: Path, bots: Bots) -> None:
    path = write_league(tmp_path / "league.yaml", bots, extra="keep_logs: 0")
    assert referee_main(["validate", str(path)]) != 0
    assert SAMPLE_BOTS.is_dir()


def test_a_duel_that_adjusts_for_luck_keeps_every_log(
    tmp_path: Path, bots: Bots, capsys: pytest.CaptureFixture[str]
) -> None:
    extra = "keep_logs: 10\nformat: {type: sprt, candidates: [alpha, bravo], elo0: 0, elo1: 50, adjust_for_luck: true}"
    path = write_league(tmp_path / "league.yaml", bots, extra=extra, rounds=None)
    assert referee_main(["validate", str(path)]) == 1
    assert (
        "keep_logs: 10 games; a duel that adjusts for luck measures each game's luck from its log"
        in capsys.readouterr().err
    )
