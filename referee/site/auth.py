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

:class:`FailureLimiter` slows a client that keeps presenting bad tokens:
after ``max_failures`` in ``window_s`` seconds it is refused, with no
token checked, for ``lockout_s`` seconds, doubled for each lockout in a
row (up to an hour).
"""

from __future__ import annotations

import fcntl
import hashlib
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

from referee.atomic import replace_json
from referee.config.schema import NAME_PATTERN, NAME_RULE
from referee.errors import RefereeError

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


class FailureLimiter:
    """Counts each client's failed sign-ins; a client with too many is refused for a while, and told when to retry."""

    def __init__(
        self, max_failures: int = 10, window_s: float = 60.0, lockout_s: float = 60.0, max_clients: int = 10_000
    ) -> None:
        self.max_failures = max_failures
        self.window_s = window_s
        self.lockout_s = lockout_s
        self.max_clients = max_clients
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._locked: dict[str, tuple[float, int]] = {}  # client -> (until, lockouts in a row)

    def retry_after(self, client: str) -> float:
        """Seconds until ``client`` may try again (0: it may now)."""
        locked = self._locked.get(client)
        return max(0.0, locked[0] - time.monotonic()) if locked else 0.0

    def failed(self, client: str) -> float:
        """Count a failure of ``client``; return the seconds it is now locked out for (0: not locked out)."""
        now = time.monotonic()
        failures = self._failures.setdefault(client, deque())
        self._failures.move_to_end(client)
        failures.append(now)
        while failures and failures[0] < now - self.window_s:
            failures.popleft()
        while len(self._failures) > self.max_clients:
            self._failures.popitem(last=False)
        if len(failures) < self.max_failures:
            return 0.0
        _, row = self._locked.get(client, (0.0, 0))
        seconds = min(self.lockout_s * 2.0**row, 3600.0)
        self._locked[client] = (now + seconds, row + 1)
        failures.clear()
        return seconds

    def succeeded(self, client: str) -> None:
        self._failures.pop(client, None)
        self._locked.pop(client, None)
