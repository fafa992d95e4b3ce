"""Authors' tokens: issued once by the organiser, stored only as salted hashes, compared in constant time.

``referee ladder LADDER.yaml --add-author NAME`` issues an author a token
and prints it once; the ladder's output keeps, in ``authors.json``, only a
random salt and the SHA-256 of the salt and the token for each author, so
a reader of that file (or of a backup of it) cannot sign in. A token is 32
random bytes: a slow password hash guards guessable secrets, and nothing
guesses 256 bits, so one SHA-256 is enough and costs a request nothing.
``--revoke-author NAME`` ends a token; issuing again replaces it. Both
take effect at once on a running ``referee serve``, which reads the file
again whenever it changes.

A token is checked against every author's hash, each comparison with
:func:`secrets.compare_digest` and none cut short, so how long a check
takes says nothing of which author, if any, a token is close to. The
server remembers a signed-in browser by a session of its own (a random
identifier in an HttpOnly, SameSite=Strict cookie), never by the token,
and ends it when the author's token is revoked or replaced.

:class:`FailureLimiter` counts bad tokens by the client's network (its
/24 for IPv4, its /64 for IPv6: one machine holds a whole IPv6 /64), and a
success forgets none of them: after ``max_failures`` in ``window_s``
seconds, the network's wrong tokens are answered 429 for ``lockout_s``
seconds, doubled for each lockout in a row (up to an hour). A correct
token is still checked and accepted from a network locked out, so that
attackers behind an author's NAT cannot lock the author out; what keeps a
token safe from guessing is its 256 bits, not the lockout, which bounds
the noise of a flood (one log line a lockout) and tells honest scripts to
back off. It tracks at most ``max_networks`` networks, forgetting the one
that failed longest ago first, so a flood from many networks costs the
server a bounded amount of memory.
"""

from __future__ import annotations

import fcntl
import hashlib
import ipaddress
import json
import os
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from referee.common.atomic import replace_json
from referee.common.errors import RefereeError
from referee.leaguefile.config.schema import NAME_PATTERN, NAME_RULE

AUTHORS_FILE = "authors.json"  # in the ladder's output; never served
TOKEN_PREFIX = "brag_"  # makes a leaked token easy to recognise (and to search for) in a log or a repository
TOKEN_BYTES = 32
SALT_BYTES = 16
SESSION_COOKIE = "referee_session"
SESSION_HOURS = 12.0
MAX_SESSIONS = 10_000  # the oldest goes first: a flood of sign-ins cannot grow the server without bound


class AuthorsError(RefereeError):
    """An author cannot be added or revoked: a bad name, an unknown author, an unreadable authors file."""


@dataclass(frozen=True)
class AuthorKey:
    """What the ladder keeps of one author's token: never the token itself."""

    author: str
    salt: str  # hex
    hash: str  # hex: SHA-256 of the salt's bytes and the token's
    issued: str  # UTC, ISO 8601
    revoked: str | None = None


def token_hash(salt: bytes, token: str) -> bytes:
    return hashlib.sha256(salt + token.encode("utf-8", "surrogatepass")).digest()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Authors:
    """``OUTPUT/authors.json``: the ladder file it belongs to and each author's key, read again when it changes."""

    def __init__(self, output: Path) -> None:
        self.path = output / AUTHORS_FILE
        self._seen: tuple[int, int, int] | None = None
        self.ladder: str | None = None  # the ladder file, so that `referee serve OUTPUT` finds the submissions
        self.keys: dict[str, AuthorKey] = {}
        self.reload()

    def reload(self) -> None:
        """Read the file again if it changed since it was last read (a token added or revoked meanwhile)."""
        try:
            status = self.path.stat()
        except FileNotFoundError:
            self._seen, self.ladder, self.keys = None, None, {}
            return
        seen = (status.st_ino, status.st_mtime_ns, status.st_size)
        if seen == self._seen:
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            keys = {entry["author"]: AuthorKey(**entry) for entry in data.get("authors", [])}
            ladder = data.get("ladder")
        except (OSError, ValueError, TypeError, KeyError) as error:
            raise AuthorsError(f"{self.path}: not an authors file the referee wrote ({error})") from None
        self._seen, self.ladder, self.keys = seen, ladder if isinstance(ladder, str) else None, keys

    def who(self, token: str) -> AuthorKey | None:
        """The author whose current token ``token`` is (revoked or not), or None; in the same time whoever it is."""
        self.reload()
        found = None
        for key in self.keys.values():  # every key is compared: none is skipped once one matches
            if secrets.compare_digest(token_hash(bytes.fromhex(key.salt), token), bytes.fromhex(key.hash)):
                found = key
        return found

    def current(self, author: str) -> AuthorKey | None:
        self.reload()
        key = self.keys.get(author)
        return key if key is not None and key.revoked is None else None

    # ----- the organiser's changes (referee ladder --add-author, --revoke-author) --------------------

    def issue(self, author: str, ladder: Path) -> str:
        """A new token for ``author`` (replacing any earlier one), to be shown once; only its hash is kept."""
        if not NAME_PATTERN.match(author):
            raise AuthorsError(f"--add-author {author!r}: not a valid author name; use {NAME_RULE}")
        token = TOKEN_PREFIX + secrets.token_urlsafe(TOKEN_BYTES)
        salt = secrets.token_bytes(SALT_BYTES)
        key = AuthorKey(author, salt.hex(), token_hash(salt, token).hex(), _now())
        with self._editing():
            self.keys[author] = key
            self.ladder = str(ladder.resolve())
            self._write()
        return token

    def revoke(self, author: str) -> AuthorKey:
        with self._editing():
            key = self.keys.get(author)
            if key is None or key.revoked is not None:
                known = ", ".join(name for name, entry in sorted(self.keys.items()) if entry.revoked is None)
                raise AuthorsError(
                    f"--revoke-author {author}: no token of {author!r} is in force; authors with one: {known or 'none'}"
                )
            self.keys[author] = key = AuthorKey(key.author, key.salt, key.hash, key.issued, _now())
            self._write()
        return key

    @contextmanager
    def _editing(self) -> Iterator[None]:
        """Hold the file's lock while it is read and rewritten, so two commands at once lose neither's change."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        lock = os.open(self.path.with_name(AUTHORS_FILE + ".lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self._seen = None
            self.reload()
            yield
        finally:
            os.close(lock)

    def _write(self) -> None:
        data: dict[str, Any] = {
            "ladder": self.ladder,
            "authors": [asdict(key) for _, key in sorted(self.keys.items())],
        }
        replace_json(self.path, data, mode=0o600)
        self._seen = None


# ----- sessions and failures, in the server's memory ----------------------------------------------------


@dataclass
class Session:
    author: str
    hash: str  # the author's token hash when they signed in: a new or revoked token ends the session
    expires: float


class Sessions:
    """Signed-in browsers: a random identifier (the cookie's value) to its author, for ``SESSION_HOURS``."""

    def __init__(self, hours: float = SESSION_HOURS) -> None:
        self.seconds = hours * 3600
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def start(self, key: AuthorKey) -> str:
        identifier = secrets.token_urlsafe(32)
        self._sessions[identifier] = Session(key.author, key.hash, time.monotonic() + self.seconds)
        while len(self._sessions) > MAX_SESSIONS:
            self._sessions.popitem(last=False)
        return identifier

    def author(self, identifier: str, authors: Authors) -> str | None:
        """The author signed in with session ``identifier``, while the session lasts and their token is in force."""
        session = self._sessions.get(identifier)
        if session is None:
            return None
        key = authors.current(session.author)
        if session.expires < time.monotonic() or key is None or key.hash != session.hash:
            del self._sessions[identifier]
            return None
        return session.author

    def end(self, identifier: str) -> None:
        self._sessions.pop(identifier, None)


IPV4_PREFIX = 24  # failures are counted by network: an IPv4 /24 ...
IPV6_PREFIX = 64  # ... or an IPv6 /64, which one subscriber (one machine, even) is given whole
MAX_LOCKOUT_S = 3600.0


def client_network(host: str) -> str:
    """The network ``host`` is counted in: its /24 (IPv4, IPv4-mapped IPv6 included) or its /64 (IPv6); a host that
    is no IP address (a Unix socket's peer, a test client) counts alone."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # without an IPv6 zone (fe80::1%eth0)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    prefix = IPV4_PREFIX if address.version == 4 else IPV6_PREFIX
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


def trusted_proxies(addresses: str) -> list[str]:
    """The reverse proxies of ``--forwarded-allow-ips`` (comma-separated addresses or networks), each written as
    :mod:`ipaddress` writes it; raise :class:`ServeError` naming any other text. Empty: none is trusted."""
    from referee.apps.site import ServeError  # the package's own error, which imports nothing of the web libraries

    proxies = []
    for item in filter(None, (part.strip() for part in addresses.split(","))):
        try:
            network = ipaddress.ip_network(item, strict=False)
        except ValueError:
            raise ServeError(
                f"--forwarded-allow-ips {addresses!r}: {item!r} is not an IP address or network; give your reverse "
                "proxies' addresses (such as 127.0.0.1 or 10.0.0.0/8), comma-separated, or leave the option out to "
                "believe no X-Forwarded-For"
            ) from None
        single = network.prefixlen == network.max_prefixlen
        proxies.append(str(network.network_address) if single else str(network))
    return proxies


@dataclass
class _Failures:
    """One network's recent failures and its lockout."""

    times: deque[float]  # the last max_failures failures' times
    locked_until: float = 0.0
    lockouts: int = 0  # in a row: doubles the next lockout
    last: float = 0.0  # its last failure


class FailureLimiter:
    """Counts failed sign-ins by the client's network (:func:`client_network`); a network with too many has its
    wrong tokens refused for a while (429), and is told when to retry. A success forgets nothing."""

    def __init__(
        self, max_failures: int = 10, window_s: float = 60.0, lockout_s: float = 60.0, max_networks: int = 10_000
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.lockout_s = lockout_s
        self.max_networks = max_networks
        self._networks: OrderedDict[str, _Failures] = OrderedDict()  # the one that failed longest ago first

    def networks(self) -> int:
        """How many networks it tracks (never more than ``max_networks``)."""
        return len(self._networks)

    def retry_after(self, client: str) -> float:
        """Seconds until wrong tokens from ``client``'s network are checked again (0: they are now)."""
        failures = self._networks.get(client_network(client))
        return max(0.0, failures.locked_until - time.monotonic()) if failures else 0.0

    def failed(self, client: str) -> float:
        """Count a failure of ``client``'s network; return the seconds it is now locked out for (0: not locked out)."""
        now = time.monotonic()
        network = client_network(client)
        failures = self._networks.get(network)
        # A network quiet for longer than the longest lockout starts again from its first lockout.
        if failures is None or failures.last < now - MAX_LOCKOUT_S - self.window_s:
            failures = _Failures(deque(maxlen=self.max_failures))
        self._networks[network] = failures
        self._networks.move_to_end(network)
        while len(self._networks) > self.max_networks:
            self._networks.popitem(last=False)
        failures.last = now
        if failures.locked_until > now:
            return 0.0  # refused already: its lockout runs on, neither lengthened nor counted again
        failures.times.append(now)
        if len(failures.times) < self.max_failures or failures.times[0] < now - self.window_s:
            return 0.0
        seconds = min(self.lockout_s * 2.0**failures.lockouts, MAX_LOCKOUT_S)
        failures.locked_until = now + seconds
        failures.lockouts += 1
        failures.times.clear()
        return seconds
