"""Every game that may be shown as one archive: ``referee export DIR --archive OUT`` (``.tar.gz`` or ``.tar.zst``),
``GET /games.tar.gz`` on ``referee serve``, and the league's page's link to it; read back with tarfile, each holding
exactly the games shown, their records and logs as published, the league's public record, and nothing else.

A real league (tests/published.py), one of whose deals is held back as a run holds it while a game dealt alike is
still in play.
"""

from __future__ import annotations

import io
import json
import tarfile
import time
from pathlib import Path

import httpx
import pytest
import zstandard

from referee.cli import main as referee_main
from referee.publish.archive import write_archive
from referee.publish.redaction import public_game_record, public_log_record
from referee.records.gamelog import find_log, log_text

from .published import copy_of, hold, play_league, records, rewrite_pages, served, table_games
from .served import Answer, Truth, early

OUTPUT_MARK = "a bot's own thinking: never published"


@pytest.fixture(scope="module")
def league(tmp_path_factory: pytest.TempPathFactory) -> Path:
    output = play_league(tmp_path_factory.mktemp("archive"))
    for log in (output / "logs").glob("*.log"):  # each bot's output, which only its author may read
        log.write_text(f"{OUTPUT_MARK} ({log.name})\n")
    return output


def unpacked(data: bytes) -> dict[str, bytes]:
    """An archive's files by name (gzip or Zstandard), read with tarfile: plain files, each inside its one folder."""
    if data[:4] == b"\x28\xb5\x2f\xfd":  # Zstandard's magic number
        data = zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data)).read()
    with tarfile.open(fileobj=io.BytesIO(data)) as archive:
        members = archive.getmembers()
        for member in members:
            parts = Path(member.name).parts
            assert member.isfile() and member.mode == 0o644 and parts[0] == "viewer-league", member.name
            assert not member.name.startswith("/") and ".." not in parts, member.name
        return {member.name: archive.extractfile(member).read() for member in members}  # type: ignore[union-attr]


def published_lines(records_: list[dict]) -> bytes:
    return b"".join(
        (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode() for record in records_
    )


def expected(output: Path, shown_ids: list[str]) -> dict[str, bytes]:
    """What an archive of ``output`` holds of its games: each shown game's record, as published, and its log."""
    by_id = {record["game_id"]: record for record in records(output)}
    files = {"viewer-league/games.jsonl": published_lines([public_game_record(by_id[g]) for g in shown_ids])}
    for game_id in shown_ids:
        log = [json.loads(line) for line in log_text(find_log(output / "games", game_id)).splitlines()]
        files[f"viewer-league/games/{game_id}.jsonl"] = published_lines([public_log_record(r) for r in log])
    return files


def check(files: dict[str, bytes], output: Path, shown_ids: list[str], *, finished: bool) -> None:
    """``files`` hold exactly the shown games, as published, the league's public record and a README; nothing of a
    game held back, of the seed before every game is shown, or of a bot's output."""
    assert sorted(files) == sorted(
        ["viewer-league/README.txt", "viewer-league/league.json", *expected(output, shown_ids)]
    )
    for name, content in expected(output, shown_ids).items():
        assert files[name] == content, name
    league = json.loads(files["viewer-league/league.json"])
    assert league["name"] == "viewer-league" and league["scheduled"] == 12
    assert league["bots"] == ["alpha", "bravo", "charlie", "faulty"]
    assert "league" not in league and "source" not in league, "nothing of the league file but its settings"
    recorded = json.loads((output / "league.json").read_text())
    seed = str(recorded["settings"]["seed"])
    everything = b"".join(files.values()).decode()
    assert (league["settings"].get("seed") == seed) is finished
    assert ("seed_commitment" in league["settings"]) is not finished
    held = [record for record in records(output) if record["game_id"] not in shown_ids]
    for record in held:
        assert record["game_id"] not in everything and record["seed"] not in everything
    assert OUTPUT_MARK not in everything


def test_referee_export_writes_every_game_shown_and_no_other_as_one_archive(league: Path, tmp_path: Path) -> None:
    output = copy_of(league, tmp_path)
    held = table_games(output, 3)
    hold(output, held)
    shown_ids = [record["game_id"] for record in records(output) if record["game_id"] not in held]
    for name in ("games.tar.gz", "games.tgz", "games.tar.zst"):
        archive = tmp_path / name
        assert referee_main(["export", str(output), "--archive", str(archive)]) == 0
        check(unpacked(archive.read_bytes()), output, shown_ids, finished=False)
    # Its deals over, every game is in it, and the seed with them.
    (output / "visibility.json").unlink()
    assert referee_main(["export", str(output), "--archive", str(tmp_path / "all.tar.gz")]) == 0
    every = [record["game_id"] for record in records(output)]
    check(unpacked((tmp_path / "all.tar.gz").read_bytes()), output, every, finished=True)


def test_referee_export_says_what_an_archive_may_be_called_and_what_folder_it_is_of(
    league: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert referee_main(["export", str(league), "--archive", str(tmp_path / "games.zip")]) == 1
    assert ".tar.gz" in capsys.readouterr().err
    assert referee_main(["export", str(tmp_path), "--archive", str(tmp_path / "games.tar.gz")]) == 1
    assert "no games.jsonl" in capsys.readouterr().err
    assert not (tmp_path / "games.tar.gz").exists()


def test_the_league_pages_link_leads_to_the_archive_served_and_to_one_written_beside_it(
    chromium, league: Path, tmp_path: Path
) -> None:
    output = copy_of(league, tmp_path)
    context = chromium.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
    try:
        page = context.new_page()
        page.goto((output / "leaderboard.html").as_uri())
        page.wait_for_selector("body[data-ready='1']")
        assert page.is_hidden("#archive"), "from disk, with no archive beside it: no link"
        assert referee_main(["export", str(output), "--archive", str(output / "games.tar.gz")]) == 0
        rewrite_pages(output)
        page.reload()
        page.wait_for_selector("body[data-ready='1']")
        assert page.is_visible("#archive") and page.get_attribute("#archive", "href") == "games.tar.gz"
        (output / "games.tar.gz").unlink()
        rewrite_pages(output)
        every = [record["game_id"] for record in records(output)]
        with served(output) as base:
            page.goto(f"{base}/leaderboard.html")
            page.wait_for_selector("body[data-ready='1']")
            with page.expect_download() as download:
                page.click("#archive")
            check(unpacked(Path(download.value.path()).read_bytes()), output, every, finished=True)
    finally:
        context.close()


def test_referee_serve_gives_the_games_shown_as_one_archive_and_never_one_held_back(
    league: Path, tmp_path: Path
) -> None:
    output = copy_of(league, tmp_path)
    held = table_games(output, 4)
    every = [record["game_id"] for record in records(output)]
    shown_ids = [game_id for game_id in every if game_id not in held]
    with served(output) as base:
        answer = httpx.get(f"{base}/games.tar.gz")
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/gzip"
        assert answer.headers["cache-control"] == "no-store"
        assert "viewer-league-games.tar.gz" in answer.headers["content-disposition"]
        check(unpacked(answer.content), output, every, finished=True)
        # A deal held back (however unlikely once shown): the archive kept is never given again, nor its games.
        hold(output, held)
        check(unpacked(httpx.get(f"{base}/games.tar.gz").content), output, shown_ids, finished=False)
        # Shown again: the archive is made again, within the time it waits between makings.
        (output / "visibility.json").unlink()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            files = unpacked(httpx.get(f"{base}/games.tar.gz").content)
            if len(files) > len(shown_ids) + 3:
                break
            time.sleep(0.5)
        check(files, output, every, finished=True)
        for path in ("/games.tar.gz/", "//games.tar.gz", "/games.tar.zst", "/games.tgz"):
            assert httpx.get(base + path).status_code == 404, path


def test_the_recorder_of_everything_served_finds_a_game_held_back_in_an_archive(league: Path, tmp_path: Path) -> None:
    # tests/test_nothing_early.py asks for /games.tar.gz again and again while games are played: an archive that
    # held a game before every game dealt alike with it had ended is caught, and one that did not is not.
    output = copy_of(league, tmp_path)
    truth = Truth(output, 0.0)
    stream = io.BytesIO()
    write_archive(output, stream)
    archive = stream.getvalue()
    game = table_games(output, 2)[0]
    late = max(truth.shown_at(game_id) for game_id in truth.seed) + 1
    assert early([Answer(late, "/games.tar.gz", 200, archive)], truth) == []
    found = early([Answer(truth.shown_at(game) - 0.5, "/games.tar.gz", 200, archive)], truth)
    assert any(line.startswith(f"/games.tar.gz (200) shows finished game {game}") for line in found), found
    assert any("counts 12 games when" in line for line in found), found
    cut = archive[: len(archive) // 2]  # an answer cut short: what it holds is still read
    found = early([Answer(truth.shown_at(game) - 0.5, "/games.tar.gz", 200, cut)], truth)
    assert any("shows finished game" in line for line in found), found
