"""A season on the web: authors upload to a running ladder and follow their bots on their own pages.

Everything real: a ``referee ladder`` process playing, a ``referee serve``
process on loopback, archives built by the test (hostile ones included)
sent with curl, and Chromium (through Playwright) signing in, uploading
with the form and reading the author's page at desktop and phone widths.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from referee.records.gamelog import log_files, log_game_id
from referee.records.visibility import Shown
from tests.conftest import CHROMIUM, CHROMIUM_ARGS, PYTHON, SAMPLE_BOTS, Bots, sync_playwright
from tests.test_ladder import interrupted, ladder_file, lines, start, wait_for
from tests.test_serve import free_port
from tests.test_site import add_author

WAIT_S = 120.0
# One client for every request: each bare httpx.get builds a TLS context first (45 ms), and the test reads every
# file of the output folder through the server.
HTTP = httpx.Client()
ANN_SAYS = "ann-v2-thinks-aloud"  # what ann's new version writes to its output: hers alone to read
NOISY_BOT = f"""
import random
import sys

from referee.play.kit import run_bot


def decide(obs):
    print("{ANN_SAYS}", obs.hand_number, file=sys.stderr, flush=True)
    return random.Random(repr((obs.seat, obs.hand_number, obs.turns_this_hand))).choice(obs.legal_actions)


if __name__ == "__main__":
    run_bot(decide, name="noisy", version="2")
"""


def bot_folder(where: Path, name: str, bots: Bots, script: str = "random_bot.py", source: str | None = None) -> Path:
    folder = where / name
    shutil.copytree(SAMPLE_BOTS, folder, ignore=shutil.ignore_patterns("__pycache__"))
    if source is not None:
        (folder / script).write_text(source)
    run = json.dumps(["python", script, "--marker", bots.marker])
    (folder / "bot.yaml").write_text(f"name: {name}\nversion: '2'\nrun: {run}\n")
    return folder


def tar_gz(folder: Path, top: str | None = None) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        archive.add(folder, arcname=top or ".", filter=lambda info: None if "__pycache__" in info.name else info)
    return data.getvalue()


def zipped(folder: Path) -> bytes:
    data = io.BytesIO()
    with zipfile.ZipFile(data, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(folder))
    return data.getvalue()


def snapshot(folder: Path) -> dict[str, tuple]:
    """Every path under ``folder``: its kind, mode and content or link target."""
    found = {}
    for path in sorted(folder.rglob("*")):
        status = path.lstat()
        if path.is_symlink():
            found[str(path.relative_to(folder))] = ("link", os.readlink(path))
        elif path.is_dir():
            found[str(path.relative_to(folder))] = ("dir", status.st_mode)
        else:
            found[str(path.relative_to(folder))] = ("file", status.st_mode, path.read_bytes())
    return found


def curl(url: str, token: str | None, archive: Path) -> tuple[int, dict]:
    """``curl`` as an author's CI would run it: the token in a header read from a file, the archive as the body."""
    command = ["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", "--data-binary", f"@{archive}"]
    if token is not None:
        headers = archive.with_suffix(".headers")
        headers.write_text(f"Authorization: Bearer {token}\n")
        command += ["-H", f"@{headers}"]
    run = subprocess.run([*command, url], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    body, _, status = run.stdout.rpartition("\n")
    return int(status), json.loads(body)


@pytest.fixture
def season(tmp_path: Path, bots: Bots) -> Iterator[dict]:
    """A ladder of three authors playing, served on loopback; ann and bob have tokens."""
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (apt-get install curl)")
    # One game at a time: the games go on behind what the test does (uploads, pages), which is the point here.
    path = ladder_file(tmp_path, bots, {"ann": "heuristic", "bob": "random", "cat": "random"}, concurrency=1)
    tokens = {name: add_author(path, name) for name in ("ann", "bob")}
    port = free_port()
    server = subprocess.Popen([PYTHON, "-m", "referee", "serve", str(path), "--port", str(port)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    base = f"http://127.0.0.1:{port}/"
    ladder = start(path, bots)
    try:
        wait_for("the server", lambda: _answers(base), ladder)
        wait_for("three games", lambda: len(lines(tmp_path / "out" / "games.jsonl")) >= 3, ladder)
        yield {"path": path, "out": tmp_path / "out", "submissions": tmp_path / "submissions", "base": base,
               "tokens": tokens, "ladder": ladder, "server": server, "bots": bots, "tmp": tmp_path}  # fmt: skip
    finally:
        if ladder.poll() is None:
            interrupted(ladder)
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)


def _answers(base: str) -> bool:
    try:
        return HTTP.get(base + "leaderboard.html", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def judged(out: Path, bot: str) -> dict | None:
    return next((record for record in lines(out / "register.jsonl") if record.get("bot") == bot), None)


def test_authors_upload_to_a_running_ladder_and_follow_their_bots(season) -> None:
    out, base, tokens, ladder = season["out"], season["base"], season["tokens"], season["ladder"]
    scratch = season["tmp"] / "scratch"
    scratch.mkdir()

    # ann's CI uploads a new version with curl.
    ann = bot_folder(scratch, "ann", season["bots"], "noisy_bot.py", NOISY_BOT)
    (scratch / "ann.tar.gz").write_bytes(tar_gz(ann, "ann-bot"))  # wrapped in one folder, as `tar czf` makes it
    status, answer = curl(base + "api/submissions", tokens["ann"], scratch / "ann.tar.gz")
    assert status == 202, answer
    assert (answer["author"], answer["version"]) == ("ann", "ann-v2") and answer["follow"] == base + "authors/ann/"
    assert answer["status"].startswith("waiting to be judged")
    wait_for("ann-v2's verdict", lambda: judged(out, "ann-v2") is not None, ladder)
    assert judged(out, "ann-v2")["verdict"] == "accepted", judged(out, "ann-v2")

    def shown_games() -> list[dict]:  # the games that may be shown: their table's every rotation over
        return list(Shown.read(out).records(out))

    wait_for("a game of ann-v2 shown", lambda: any("ann-v2" in game["seats"] for game in shown_games()), ladder)
    again_status, again = curl(base + "api/submissions", tokens["ann"], scratch / "ann.tar.gz")
    assert again_status == 200 and again["status"].startswith("unchanged"), again

    # Her page: the verdict, the check games and their output, the build log, her bot's output in a game.
    ann_page = HTTP.get(base + "authors/ann/", headers={"Authorization": f"Bearer {tokens['ann']}"}, timeout=10)
    assert ann_page.status_code == 200
    assert "ann-v2: " in ann_page.text and "accepted" in ann_page.text
    check_game = re.search(r'href="(checks/ann-v2/[^"]+\.html)"', ann_page.text).group(1)
    auth = {"Authorization": f"Bearer {tokens['ann']}"}
    replay = HTTP.get(base + "authors/ann/" + check_game, headers=auth, timeout=10)
    assert replay.status_code == 200 and "<script" in replay.text
    check_output = HTTP.get(base + "authors/ann/" + check_game.replace(".html", ".txt"), headers=auth, timeout=10)
    assert check_output.status_code == 200 and ANN_SAYS in check_output.text
    game = next(game for game in shown_games() if "ann-v2" in game["seats"])
    output = HTTP.get(base + f"authors/ann/games/{game['game_id']}.txt", headers=auth, timeout=10)
    assert output.status_code == 200 and ANN_SAYS in output.text, output.text
    versions = HTTP.get(base + "api/submissions", headers=auth, timeout=10).json()
    assert [version["bot"] for version in versions["versions"]] == ["ann-v1", "ann-v2"]

    # bob's token sees none of it.
    bob = {"Authorization": f"Bearer {season['tokens']['bob']}"}
    for url in ("authors/ann/", "authors/ann/" + check_game, f"authors/ann/games/{game['game_id']}.txt"):
        assert HTTP.get(base + url, headers=bob, timeout=10).status_code == 403, url

    # Hostile archives are refused in one line each, nothing lands, and the ladder plays on.
    played = len(lines(out / "games.jsonl"))
    before = snapshot(season["submissions"])
    for name, data in hostile_archives(scratch).items():
        (scratch / name).write_bytes(data)
        status, refusal = curl(base + "api/submissions", tokens["bob"], scratch / name)
        assert status in (413, 422), (name, status, refusal)
        assert "\n" not in refusal["error"] and str(season["tmp"]) not in refusal["error"], (name, refusal)
    assert snapshot(season["submissions"]) == before
    wait_for("more games", lambda: len(lines(out / "games.jsonl")) > played + 2, ladder)
    # A script without its token is told to send it (as any request from no page of the site that changes something).
    status, refusal = curl(base + "api/submissions", None, scratch / "ann.tar.gz")
    assert status == 403 and "Authorization: Bearer TOKEN" in refusal["error"], refusal
    assert snapshot(season["submissions"]) == before

    # bob uploads with the form on his page, in Chromium, and follows his version there, on a phone too.
    if sync_playwright is not None and CHROMIUM.exists():
        bob_uploads_with_the_form_and_reads_his_page(season, scratch)

    # The ladder stopped, so that the files read below are all there will be (and no game competes for the CPU).
    status, said = interrupted(ladder)
    # Nobody else reads any bot's output: not on a public page, not in any file served to an anonymous visitor.
    served = {}
    for path in sorted(out.rglob("*")):
        if path.is_file():
            answer = HTTP.get(base + str(path.relative_to(out)), timeout=10)
            if answer.status_code == 200:
                served[str(path.relative_to(out))] = answer.text
    # Published: the games recorded, but not those whose table the interrupt left unfinished (their deals are still
    # to be played), nor a game it cut short (its log, no record).
    published = {record["game_id"] for record in Shown.read(out).records(out)}
    for log_file in log_files(out / "games"):  # each replay, made from its log when asked for
        game_id = log_game_id(log_file)
        answer = HTTP.get(f"{base}replays/{game_id}.html", timeout=10)
        assert answer.status_code == (200 if game_id in published else 404), game_id
        if answer.status_code == 200:
            served[f"replays/{game_id}.html"] = answer.text
    assert "leaderboard.html" in served and any(name.startswith("replays/") for name in served)
    assert [name for name, text in served.items() if ANN_SAYS in text] == []
    assert not any(name.startswith(("logs/", "checks/", "reports/")) for name in served)

    # No token in any file the referee wrote, nor in what the processes said (the server logged every refusal).
    season["server"].send_signal(signal.SIGINT)
    logged = "".join(season["server"].communicate(timeout=30))
    assert "an upload by bob refused" in logged and "an upload by ann landed" in logged, logged
    for path in season["tmp"].rglob("*"):
        if path.is_file() and not path.name.endswith(".headers"):
            data = path.read_bytes()
            assert not any(token.encode() in data for token in tokens.values()), path
    assert not any(token in said or token in logged for token in tokens.values())


def bob_uploads_with_the_form_and_reads_his_page(season: dict, scratch: Path) -> None:
    out, base, ladder = season["out"], season["base"], season["ladder"]
    bob = bot_folder(scratch, "bob", season["bots"])
    manifest = bob / "bot.yaml"
    manifest.write_text(manifest.read_text() + "build: python -c \"print('bob builds v2')\"\n")
    (scratch / "bob-v2.zip").write_bytes(zipped(bob))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            desktop = browser.new_context(viewport={"width": 1280, "height": 900})
            page = desktop.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(base + "authors/bob/")
            assert "Sign in" in page.title() or page.locator("#token").count() == 1
            page.fill("#token", season["tokens"]["bob"])
            page.click("button[type=submit]")
            page.wait_for_url(base + "authors/bob/")
            (cookie,) = [cookie for cookie in desktop.cookies() if cookie["name"] == "referee_session"]
            assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
            assert season["tokens"]["bob"] not in cookie["value"]
            page.set_input_files("#archive", str(scratch / "bob-v2.zip"))
            page.click("#upload button[type=submit]")
            page.wait_for_url(base + "authors/bob/")
            assert "bob-v2" in page.locator("#waiting").inner_text()
            wait_for("bob-v2's verdict", lambda: judged(out, "bob-v2") is not None, ladder)
            assert judged(out, "bob-v2")["verdict"] == "accepted", judged(out, "bob-v2")

            # The register takes the verdict a moment before bob's report does, and his page is drawn from the report.
            def on_his_page() -> bool:
                page.reload()
                return page.locator("section#bob-v2").count() == 1

            wait_for("bob-v2 on bob's page", on_his_page, ladder)
            version = page.locator("section#bob-v2")
            assert "accepted" in version.locator("h2").inner_text()
            with page.expect_navigation():
                version.get_by_text("the build's output").click()
            assert "bob builds v2" in page.inner_text("body")
            page.go_back()
            with page.expect_navigation():
                page.locator("section#bob-v2").get_by_text("replay").first.click()
            assert page.locator("#game").count() == 1 or "check-" in page.url
            page.go_back()
            assert season["tokens"]["bob"] not in page.content()
            # On a phone: one column, nothing wider than the screen, both versions' names whole.
            phone = browser.new_context(viewport={"width": 375, "height": 740}, storage_state=desktop.storage_state())
            small = phone.new_page()
            small.on("pageerror", lambda error: errors.append(str(error)))
            small.goto(base + "authors/bob/")
            assert small.evaluate("document.documentElement.scrollWidth") <= 375
            for name in ("bob-v1", "bob-v2"):
                heading = small.locator(f"section#{name} h2")
                assert heading.is_visible() and name in heading.inner_text()
                assert heading.evaluate("(element) => element.scrollWidth <= element.clientWidth")
            with small.expect_navigation():
                small.click("text=Sign out")
            small.goto(base + "authors/bob/")
            assert small.locator("#token").count() == 1  # signed out: the sign-in form again
            assert not errors, errors
        finally:
            browser.close()


def hostile_archives(scratch: Path) -> dict[str, bytes]:
    """One archive of each kind a stranger might send, each named for what is wrong with it."""
    archives = {}
    good = scratch / "good"
    good.mkdir()
    (good / "bot.yaml").write_text("name: x\nversion: '1'\nrun: python bot.py\n")

    def tar(name: str, add: Callable[[tarfile.TarFile], None]) -> None:
        data = io.BytesIO()
        with tarfile.open(fileobj=data, mode="w:gz") as archive:
            archive.add(good / "bot.yaml", arcname="bot.yaml")
            add(archive)
        archives[name] = data.getvalue()

    def member(name: str, kind: bytes = tarfile.REGTYPE, **fields) -> Callable[[tarfile.TarFile], None]:
        def add(archive: tarfile.TarFile) -> None:
            info = tarfile.TarInfo(name)
            info.type = kind
            for key, value in fields.items():
                setattr(info, key, value)
            content = b"x" * info.size
            archive.addfile(info, io.BytesIO(content) if kind == tarfile.REGTYPE else None)

        return add

    tar("climbs.tar.gz", member("../bob/bot.py", size=1))
    tar("absolute.tar.gz", member("/etc/cron.d/x", size=1))
    tar("link-out.tar.gz", member("data", tarfile.SYMTYPE, linkname="../../../etc"))
    tar("hard-link.tar.gz", member("passwd", tarfile.LNKTYPE, linkname="/etc/passwd"))
    tar("device.tar.gz", member("null", tarfile.CHRTYPE, devmajor=1, devminor=3))
    tar("fifo.tar.gz", member("pipe", tarfile.FIFOTYPE))
    tar("setuid.tar.gz", member("run", size=1, mode=0o4755))
    with io.BytesIO() as bomb:
        with tarfile.open(fileobj=bomb, mode="w:gz") as archive:
            info = tarfile.TarInfo("bot.yaml")
            info.size = 300 * 2**20
            archive.addfile(info, _Zeros(info.size))
        archives["gzip-bomb.tar.gz"] = bomb.getvalue()
    archives["truncated.tar.gz"] = tar_gz(good)[:-40]
    archives["not-an-archive.tar.gz"] = b"#!/bin/sh\nrm -rf /\n"
    archives["too-big.tar.gz"] = os.urandom(21 * 2**20)
    return archives


class _Zeros(io.RawIOBase):
    """``size`` zero bytes, read without holding them."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count

    def readable(self) -> bool:
        return True
