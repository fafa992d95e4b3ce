"""Who a sign-in's failures are counted against, which proxies are believed, and what an author may upload how often.

A real ``referee serve`` process of a ladder file on 127.0.0.1, real sockets. Loopback addresses stand for clients:
127.0.0.X are one /24 network, 127.0.1.X another; a client binds its own before it connects. A proxy the organiser
trusts (``--forwarded-allow-ips``) names visitors' addresses, IPv6 ones included, in ``X-Forwarded-For``.
"""

from __future__ import annotations

import contextlib
import io
import signal
import subprocess
import tarfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest

from referee.apps.ladder.history import Judged, Register
from referee.apps.site.auth import FailureLimiter, client_network
from referee.records.results import ACCEPTED
from tests.conftest import PYTHON
from tests.test_serve import free_port, wait_until_serving
from tests.test_site import add_author, ladder_file

WRONG = "brag_" + "w" * 43  # the shape of a token, of no author
MAX_FAILURES = 10  # FailureLimiter's default, which referee serve uses


@contextlib.contextmanager
def serving(path: Path, *options: str) -> Iterator[tuple[str, list[str]]]:
    """``referee serve PATH OPTIONS`` on 127.0.0.1; yield its address and, once it has stopped, what it logged."""
    port = free_port()
    server = subprocess.Popen(
        [PYTHON, "-m", "referee", "serve", str(path), "--port", str(port), *options],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    said: list[str] = []
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(base)
        assert server.poll() is None, server.communicate()[1]
        yield base, said
    finally:
        server.send_signal(signal.SIGINT)
        said.extend(server.communicate(timeout=30)[1].splitlines())


def client(base: str, address: str) -> httpx.Client:
    """A client connecting from loopback ``address``."""
    return httpx.Client(base_url=base, transport=httpx.HTTPTransport(local_address=address), timeout=10)


def bearer(token: str, forwarded_for: str | None = None) -> dict[str, str]:
    headers = {"Authorization": f"Bearer {token}"}
    if forwarded_for is not None:
        headers["X-Forwarded-For"] = forwarded_for
    return headers


@pytest.fixture
def season(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    path = ladder_file(tmp_path)
    return path, {name: add_author(path, name) for name in ("ann", "bob")}


def test_wrong_tokens_are_counted_by_network_and_neither_a_success_nor_a_lockout_stops_an_author(season) -> None:
    path, tokens = season
    with serving(path) as (base, said), client(base, "127.0.0.5") as nat, client(base, "127.0.0.77") as neighbour:
        # 180 wrong tokens, each ninth followed by ann's own: a success used to reset the count, and no 429 came.
        answers = []
        for number in range(180):
            answers.append(("wrong", nat.get("/api/submissions", headers=bearer(WRONG)).status_code))
            if number % 9 == 8:
                answers.append(("ann", nat.get("/api/submissions", headers=bearer(tokens["ann"])).status_code))
        # Another machine of the same /24, behind the same NAT say: its wrong tokens are refused at once, and bob,
        # signing in from there with his own, is let in (so is the form).
        neighbours = [neighbour.get("/api/submissions", headers=bearer(WRONG)).status_code for _ in range(3)]
        bob = neighbour.get("/api/submissions", headers=bearer(tokens["bob"])).status_code
        form = neighbour.post("/signin", data={"token": tokens["bob"]}, headers={"Origin": base})
        locked = neighbour.get("/api/submissions", headers=bearer(WRONG))
        with client(base, "127.0.1.5") as elsewhere:  # another /24: its failures are its own
            other = elsewhere.get("/api/submissions", headers=bearer(WRONG)).status_code
    wrong = [status for who, status in answers if who == "wrong"]
    assert wrong[:MAX_FAILURES] == [401] * MAX_FAILURES and set(wrong[MAX_FAILURES:]) == {429}, wrong
    assert {status for who, status in answers if who == "ann"} == {200}, answers
    assert neighbours == [429] * 3 and bob == 200 and form.status_code == 303, (neighbours, bob, form)
    assert 1 <= int(locked.headers["retry-after"]) <= 60 and "127.0.0.77" in locked.json()["error"]
    assert other == 401
    lockouts = [line for line in said if "too many failed sign-ins" in line]
    assert len(lockouts) == 1 and "127.0.0.5: too many failed sign-ins: refused for 60 s" in lockouts[0], said
    assert "every wrong token from 127.0.0.0/24" in lockouts[0]
    assert not any(token in line for line in said for token in (WRONG, *tokens.values()))


def test_a_forged_forwarded_for_is_ignored_unless_a_trusted_proxy_sent_it(season) -> None:
    path, tokens = season
    # By default no proxy is trusted: not even this machine's 127.0.0.1, where a build or a bot with the host's
    # network could connect from. Each wrong token claims another visitor; all count against 127.0.0.0/24.
    with serving(path) as (base, said), client(base, "127.0.0.1") as forger:
        statuses = [
            forger.get("/api/submissions", headers=bearer(WRONG, f"198.51.{number}.7")).status_code
            for number in range(MAX_FAILURES + 2)
        ]
        secure = forger.post(
            "/signin", data={"token": tokens["ann"]}, headers={"X-Forwarded-Proto": "https", "Origin": base}
        )
    assert statuses == [401] * MAX_FAILURES + [429] * 2, statuses
    assert "Secure" not in secure.headers["set-cookie"]  # the forged scheme is not believed either
    refused = [line for line in said if "a token refused" in line]
    assert refused and all("127.0.0.1: a token refused" in line for line in refused), said
    assert not any("198.51." in line for line in said)
    # A proxy the organiser names is believed: the visitors it names are counted apart, by their networks (an IPv6
    # /64 is one network: a machine may hold all of it), and its HTTPS is.
    with serving(path, "--forwarded-allow-ips", "127.0.0.2, 10.9.0.0/16") as (base, said):
        with client(base, "127.0.0.2") as proxy:
            walking = [
                proxy.get("/api/submissions", headers=bearer(WRONG, f"2001:db8:5:6:{number:x}::1")).status_code
                for number in range(1, MAX_FAILURES + 3)
            ]
            next_64 = proxy.get("/api/submissions", headers=bearer(WRONG, "2001:db8:5:7::1")).status_code
            secure = proxy.post(
                "/signin",
                data={"token": tokens["ann"]},
                headers={"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https", "Origin": base},
            )
        with client(base, "127.0.0.3") as untrusted:  # not the proxy: its header is its own word
            forged = untrusted.get("/api/submissions", headers=bearer(WRONG, "2001:db8:5:7::1")).status_code
    assert walking == [401] * MAX_FAILURES + [429] * 2, walking
    assert next_64 == 401 and forged == 401
    assert "Secure" in secure.headers["set-cookie"]
    assert any("2001:db8:5:6:1::1: a token refused" in line for line in said), said
    assert any("every wrong token from 2001:db8:5:6::/64" in line for line in said), said
    assert any("127.0.0.3: a token refused" in line for line in said), said


def test_forwarded_allow_ips_takes_addresses_and_networks_only(tmp_path: Path) -> None:
    path = ladder_file(tmp_path)
    run = subprocess.run(
        [PYTHON, "-m", "referee", "serve", str(path), "--port", str(free_port()), "--forwarded-allow-ips", "*"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode != 0
    assert "--forwarded-allow-ips '*': '*' is not an IP address or network" in run.stderr, run.stderr


def test_the_failures_of_many_networks_take_bounded_memory_the_oldest_forgotten_first() -> None:
    limiter = FailureLimiter(max_networks=1000)
    for number in range(20_000):  # a visitor walking over 20,000 IPv6 /64s, a failure from each
        limiter.failed(f"2001:db8:{number >> 16:x}:{number & 0xFFFF:x}::1")
    assert limiter.networks() == 1000
    # The newest are kept: the last network is one failure from ... nine more failures from a lockout.
    last = "2001:db8:0:4e1f::2"
    assert client_network(last) == "2001:db8:0:4e1f::/64"
    assert [limiter.failed(last) for _ in range(MAX_FAILURES - 1)][-1] > 0
    first = "2001:db8::7"  # forgotten: it starts again
    assert all(limiter.failed(first) == 0 for _ in range(MAX_FAILURES - 1))
    assert client_network("::ffff:192.0.2.77") == "192.0.2.0/24" and client_network("unknown") == "unknown"


def test_a_sign_in_form_over_its_limits_is_refused_unread_and_counts_as_no_failure(season) -> None:
    path, tokens = season
    with serving(path) as (base, _), client(base, "127.0.0.9") as visitor:
        long_field = visitor.post("/signin", data={"token": "x" * 100_000}, headers={"Origin": base})
        many_fields = visitor.post("/signin", data={f"f{n}": "x" for n in range(50)}, headers={"Origin": base})
        statuses = [
            visitor.post("/signin", data={"token": WRONG}, headers={"Origin": base}).status_code
            for _ in range(MAX_FAILURES)
        ]
    assert long_field.status_code == 400 and "maximum size" in long_field.text, long_field.text
    assert many_fields.status_code == 400 and "Too many fields" in many_fields.text, many_fields.text
    assert statuses == [401] * MAX_FAILURES  # the two forms over the limits were no failed sign-in


def bot_archive(text: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in (("bot.yaml", b"name: b\nversion: '1'\nrun: python bot.py\n"), ("bot.py", text.encode())):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def test_an_author_uploads_at_most_per_hour_and_keeps_at_most_versions(tmp_path: Path) -> None:
    path = ladder_file(tmp_path)
    path.write_text(path.read_text() + "uploads:\n  per_hour: 3\n  versions: 2\n")
    tokens = {name: add_author(path, name) for name in ("ann", "bob")}
    with serving(path) as (base, _), client(base, "127.0.0.4") as author:
        ann = [
            author.post("/api/submissions", content=bot_archive(f"# {number}"), headers=bearer(tokens["ann"]))
            for number in range(4)
        ]
        bob = author.post("/api/submissions", content=bot_archive("# bob"), headers=bearer(tokens["bob"]))
        register = Register(tmp_path / "out")
        for version in (1, 2):  # the ladder judges two of bob's versions: as many as it keeps for one author
            register.add(
                Judged("bob", version, f"bob-v{version}", "0" * 64, ACCEPTED, at=datetime.now(UTC).isoformat())
            )
        register.close()
        bob_again = author.post("/api/submissions", content=bot_archive("# bob 3"), headers=bearer(tokens["bob"]))
    assert [answer.status_code for answer in ann] == [202, 202, 202, 429]
    assert ann[3].json()["error"] == (
        'upload refused: author "ann": 3 uploads of yours landed in the last hour, the most an author may make '
        f"(uploads.per_hour); try again in {ann[3].headers['retry-after']} s"
    )
    assert 3500 <= int(ann[3].headers["retry-after"]) <= 3600
    assert (tmp_path / "submissions" / "ann" / "bot.py").read_text() == "# 2"  # the refused upload landed nothing
    assert bob.status_code == 202 and bob_again.status_code == 409, bob_again.text
    assert bob_again.json()["error"] == (
        'upload refused: author "bob": the ladder has judged 2 versions of yours, the most it keeps for one author '
        "(uploads.versions); ask the organiser"
    )
    assert (tmp_path / "submissions" / "bob" / "bot.py").read_text() == "# bob"
