"""The site's tokens and what each visitor may read: issued by the real command line, checked by the real app.

The app is driven in process (httpx over ASGI, no socket) for speed; the
real server on loopback, uploads while a ladder plays and the browser are
in tests/test_site_ladder.py.
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from referee.apps.site.app import create_app
from referee.apps.site.auth import AUTHORS_FILE, SESSION_COOKIE, FailureLimiter
from tests.cli import referee_in_process

SEED = 8157702950177155349
TOKEN = re.compile(r"brag_[A-Za-z0-9_-]{40,}")


def ladder_file(folder: Path) -> Path:
    (folder / "submissions").mkdir()
    path = folder / "ladder.yaml"
    path.write_text(
        f"name: season\ngame: stop_the_bus\nseed: {SEED}\ntable_size: 3\nsubmissions: submissions\noutput: out\n"
    )
    return path


def referee(*args: str) -> subprocess.CompletedProcess[str]:
    return referee_in_process(*args)  # the command's words and status; the ladder's process is not the point


def add_author(path: Path, name: str) -> str:
    run = referee("ladder", str(path), "--add-author", name)
    assert run.returncode == 0, run.stderr
    (token,) = TOKEN.findall(run.stdout)
    return token


@pytest.fixture
def season(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = ladder_file(tmp_path)
    return path, {name: add_author(path, name) for name in ("ann", "bob")}


def visit(app, calls, client: tuple[str, int] = ("127.0.0.1", 50000)):
    """Run ``calls(client)`` against ``app`` in process; return what it returns."""

    async def run():
        transport = httpx.ASGITransport(app=app, client=client)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
            return await calls(http)

    return asyncio.run(run())


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def test_a_token_is_shown_once_and_only_its_salted_hash_is_kept(tmp_path: Path) -> None:
    path = ladder_file(tmp_path)
    first = add_author(path, "ann")
    again = add_author(path, "ann")  # a new token replaces the old
    assert first != again
    stored = (tmp_path / "out" / AUTHORS_FILE).read_text()
    assert first not in stored and again not in stored and first[5:20] not in stored
    (entry,) = json.loads(stored)["authors"]
    assert entry["author"] == "ann" and len(entry["salt"]) == 32 and len(entry["hash"]) == 64
    assert (tmp_path / "out" / AUTHORS_FILE).stat().st_mode & 0o077 == 0  # readable by its owner alone
    listed = referee("ladder", str(path), "--authors")
    assert listed.returncode == 0 and "ann: token issued" in listed.stdout and "in force" in listed.stdout
    assert again not in listed.stdout
    revoked = referee("ladder", str(path), "--revoke-author", "ann")
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    twice = referee("ladder", str(path), "--revoke-author", "ann")
    assert twice.returncode == 1 and "no token of 'ann' is in force" in twice.stderr
    bad = referee("ladder", str(path), "--add-author", "../ann")
    assert bad.returncode == 1 and "not a valid author name" in bad.stderr and "Traceback" not in bad.stderr

    app = create_app(path)

    async def calls(http):
        return [(await http.get("/api/submissions", headers=bearer(token))).status_code for token in (first, again)]

    assert visit(app, calls) == [401, 401]  # the replaced token and the revoked one


def test_missing_wrong_revoked_and_other_authors_tokens_are_refused_and_learn_nothing(season) -> None:
    path, tokens = season
    app = create_app(path)

    async def calls(http):
        answers = {
            "missing": await http.get("/api/submissions"),
            "not bearer": await http.get("/api/submissions", headers={"Authorization": f"Basic {tokens['ann']}"}),
            "wrong": await http.get("/api/submissions", headers=bearer(tokens["ann"][:-2] + "xx")),
            "ann": await http.get("/api/submissions", headers=bearer(tokens["ann"])),
            "ann's page": await http.get("/authors/ann/", headers=bearer(tokens["ann"])),
            "bob's page, as ann": await http.get("/authors/bob/", headers=bearer(tokens["ann"])),
            "no one's page, as ann": await http.get("/authors/zed/", headers=bearer(tokens["ann"])),
            "bob's build log, as ann": await http.get("/authors/bob/builds/bob-v1.log", headers=bearer(tokens["ann"])),
            "bob's page, anonymous": await http.get("/authors/bob/"),
        }
        assert referee("ladder", str(path), "--revoke-author", "bob").returncode == 0
        answers["revoked"] = await http.get("/api/submissions", headers=bearer(tokens["bob"]))
        answers["revoked, bob's page"] = await http.get("/authors/bob/", headers=bearer(tokens["bob"]))
        return answers

    answers = visit(app, calls)
    assert {name: answer.status_code for name, answer in answers.items()} == {
        "missing": 401, "not bearer": 401, "wrong": 401, "ann": 200, "ann's page": 200,
        "bob's page, as ann": 403, "no one's page, as ann": 403, "bob's build log, as ann": 403,
        "bob's page, anonymous": 401, "revoked": 401, "revoked, bob's page": 401,
    }  # fmt: skip
    assert answers["ann"].json()["author"] == "ann"
    assert answers["wrong"].json() == answers["revoked"].json()  # a wrong token and a revoked one: the same words
    assert answers["wrong"].headers["www-authenticate"].startswith("Bearer")
    # Another author's page is refused in the same words whether that author exists or not.
    assert answers["bob's page, as ann"].text == answers["no one's page, as ann"].text
    assert "bob" not in answers["bob's page, as ann"].text
    for name, answer in answers.items():
        for token in tokens.values():
            assert token not in answer.text, name


def test_a_flood_of_bad_tokens_is_slowed_and_logged_without_the_tokens(season, caplog) -> None:
    path, tokens = season
    app = create_app(path, limiter=FailureLimiter(max_failures=5, window_s=60, lockout_s=30))
    flood = [f"brag_{'x' * 40}{number:03d}" for number in range(12)]

    async def calls(http):
        answers = [await http.get("/api/submissions", headers=bearer(token)) for token in flood]
        # An author is never locked out.
        answers.append(await http.get("/api/submissions", headers=bearer(tokens["ann"])))
        return answers

    async def elsewhere(http):  # another client is not held up by the first one's failures
        return await http.get("/api/submissions", headers=bearer(tokens["ann"]))

    with caplog.at_level(logging.INFO, logger="referee.apps.site"):
        answers = visit(app, calls, client=("203.0.113.7", 40000))
        other = visit(app, elsewhere, client=("198.51.100.9", 40000))
    statuses = [answer.status_code for answer in answers]
    assert statuses[:5] == [401] * 5 and set(statuses[5:-1]) == {429} and statuses[-1] == 200, statuses
    assert 1 <= int(answers[-2].headers["retry-after"]) <= 30
    assert other.status_code == 200
    log = "\n".join(record.getMessage() for record in caplog.records)
    assert "203.0.113.7: a token refused (no author's token)" in log
    assert "203.0.113.7: too many failed sign-ins: refused for 30 s" in log
    for token in [*flood, *tokens.values()]:
        assert token not in log and token[5:25] not in log


def test_signing_in_keeps_a_session_not_the_token_and_revoking_ends_it(season) -> None:
    path, tokens = season
    app = create_app(path)

    async def calls(http):
        form = await http.get("/signin")
        assert form.status_code == 200 and 'type="password"' in form.text
        own = {"Origin": "http://127.0.0.1:8000"}  # a browser's form on this site's page
        wrong = await http.post("/signin", data={"token": "brag_nope"}, headers=own)
        signed_in = await http.post("/signin", data={"token": tokens["ann"]}, headers=own)
        cookie = signed_in.headers["set-cookie"]
        page = await http.get("/authors/ann/", headers={"Accept": "text/html"})
        other = await http.get("/authors/bob/")
        cross_site = await http.post(
            "/api/submissions", content=b"x", headers={"Origin": "http://evil.example", "Accept": "text/html"}
        )
        assert referee("ladder", str(path), "--add-author", "ann").returncode == 0  # a new token ends the session
        after = await http.get("/authors/ann/")
        return wrong, signed_in, cookie, page, other, cross_site, after

    wrong, signed_in, cookie, page, other, cross_site, after = visit(app, calls)
    assert (
        wrong.status_code == 401
        and "not a valid token" in wrong.text
        and SESSION_COOKIE not in wrong.headers.get("set-cookie", "")
    )
    assert signed_in.status_code == 303 and signed_in.headers["location"] == "http://127.0.0.1:8000/authors/ann/"
    assert f"{SESSION_COOKIE}=" in cookie and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert tokens["ann"] not in cookie and tokens["ann"] not in signed_in.headers["location"]
    assert page.status_code == 200 and "ann on ladder season" in page.text and 'name="archive"' in page.text
    assert (
        page.headers["cache-control"] == "no-store"
        and "frame-ancestors 'none'" in page.headers["content-security-policy"]
    )
    assert other.status_code == 403
    assert cross_site.status_code == 403  # a form posted from another site with the cookie
    assert after.status_code == 401


def test_every_post_not_from_the_sites_own_pages_is_refused_by_one_rule_and_a_token_is_judged_alone(
    season,
) -> None:
    """Every route that changes something (sign-in, sign-out, an upload from a page, a game on /play/, a click) takes
    a request whose Origin, else Referer, names this site; one naming another site, or neither, is refused (403, in
    a sentence) before the route reads it. Only a request carrying a token in its Authorization header is judged by
    the token alone: no page of another site can make a browser send one."""
    path, tokens = season
    out = path.parent / "out"
    (out / "league.json").write_text(
        json.dumps({"name": "season", "league": {"rules": {"game": "stop_the_bus", "table_size": 3}}})
    )
    app = create_app(path, offer_play=True)
    site = "http://127.0.0.1:8000"
    posts = ["/signin", "/signout", "/api/submissions", "/play/new", "/play/0123456789abcdef/choose"]
    elsewhere = [{}, {"Origin": "http://evil.example"}, {"Origin": "null"}, {"Referer": "http://evil.example/x"},
                 {"Origin": site + ".evil.example"}]  # fmt: skip

    async def calls(http):
        signed_in = await http.post("/signin", data={"token": tokens["ann"]}, headers={"Origin": site})
        refused = {
            (path, str(headers), accept): await http.post(path, content=b"x", headers={**headers, "Accept": accept})
            for path in posts
            for headers in elsewhere
            for accept in ("application/json", "text/html")
        }
        still_in = await http.get("/authors/ann/")  # no refused sign-out ended the session
        # From this site's pages: by Origin, or by Referer where a browser sends no Origin.
        own = {
            "signout by Origin": await http.post("/signout", headers={"Origin": site}),
            "play by Referer": await http.post("/play/new", headers={"Referer": site + "/play/"}),
        }
        # A script with its token: no Origin needed (the upload is judged by the token: an empty body is no archive).
        token = await http.post("/api/submissions", content=b"", headers=bearer(tokens["ann"]))
        return signed_in, refused, still_in, own, token

    signed_in, refused, still_in, own, token = visit(app, calls)
    assert signed_in.status_code == 303
    for (path, headers, accept), answer in refused.items():
        assert answer.status_code == 403, (path, headers, accept, answer.status_code, answer.text)
        said = answer.json()["error"] if accept == "application/json" else html.unescape(answer.text)
        assert "is taken from this site's own pages (127.0.0.1:8000) alone" in said, said
        if headers == "{}":
            assert "neither by Origin nor Referer" in said
        assert accept == "application/json" or "<h1>Refused</h1>" in answer.text  # a page, for a browser
    assert still_in.status_code == 200
    assert own["signout by Origin"].status_code == 303 and own["play by Referer"].status_code == 303
    assert token.status_code not in (401, 403), token.text


def test_nothing_but_the_pages_is_served_to_anyone(season) -> None:
    path, _ = season
    out = path.parent / "out"
    for name in ("logs/ann-v1-1.log", "checks/ann-v1.json", "reports/ann.json", "uploads.jsonl", "league.json"):
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text("secret\n")
    app = create_app(path)

    async def calls(http):
        names = ["logs/ann-v1-1.log", "checks/ann-v1.json", "reports/ann.json", "uploads.jsonl", "league.json",
                 AUTHORS_FILE, "../ladder.yaml", "%2e%2e/ladder.yaml"]  # fmt: skip
        return {name: await http.get("/" + name) for name in names}

    for name, answer in visit(app, calls).items():
        assert answer.status_code == 404 and "secret" not in answer.text and "salt" not in answer.text, name


def test_an_upload_to_a_stopped_ladder_lands_and_waits_to_be_judged_when_it_starts(season) -> None:
    import io
    import tarfile

    from referee.apps.ladder.entries import changed_submissions
    from referee.apps.ladder.file import load_ladder
    from referee.apps.ladder.history import Register

    path, tokens = season
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w:gz") as archive:
        for name, text in (("bot.yaml", "name: ann\nversion: '2'\nrun: python bot.py\n"), ("bot.py", "print()\n")):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            archive.addfile(info, io.BytesIO(text.encode()))
    app = create_app(path.parent / "out")  # the ladder's output: its authors.json names the ladder file

    async def calls(http):
        raw = await http.post("/api/submissions", content=data.getvalue(), headers=bearer(tokens["ann"]))
        form = await http.post(
            "/api/submissions", files={"archive": ("bot.tar.gz", data.getvalue())}, headers=bearer(tokens["ann"])
        )
        listed = await http.get("/api/submissions", headers=bearer(tokens["ann"]))
        return raw, form, listed

    raw, form, listed = visit(app, calls)
    assert raw.status_code == 202 and form.status_code == 202, (raw.text, form.text)
    assert raw.json()["version"] == "ann-v1" and raw.json()["follow"] == "http://127.0.0.1:8000/authors/ann/"
    assert form.json()["digest"] == raw.json()["digest"]
    assert listed.json()["waiting"]["version"] == "ann-v1" and listed.json()["versions"] == []
    assert (path.parent / "submissions" / "ann" / "bot.py").read_text() == "print()\n"
    # The ladder, when it starts, finds the folder changed: it judges it first thing.
    ladder = load_ladder(path)
    register = Register(ladder.output)
    try:
        assert [(author, digest) for author, _, digest in changed_submissions(ladder, register)] == [
            ("ann", raw.json()["digest"])
        ]
    finally:
        register.close()
    record = json.loads((ladder.output / "uploads.jsonl").read_text().splitlines()[-1])
    assert record["author"] == "ann" and record["digest"] == raw.json()["digest"]
