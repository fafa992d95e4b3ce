"""The web site of a league or a season (``referee serve``): what a visitor, an author and the organiser may read.

One module an idea:

- ``app``: the application: every route, in the order they are matched,
  and the one table of who may read what (the public pages; an author's
  own page, uploads and output; nothing else of the folder);
- ``served``: what is served (the folder, its ladder, authors and
  sessions), and what every route asks of a request;
- ``public_pages``: the league's page, its events, the leaderboard files,
  ``games.jsonl`` and each game's replay and log, once it may be shown;
- ``signing_in``: who a visitor is (a token or a session), signing in and out;
- ``submissions_api``: ``/api/submissions``, an author's upload and versions;
- ``author_routes``: an author's own page and what it links to, for them alone;
- ``auth``: the authors' tokens, issued by ``referee ladder --add-author``,
  kept as salted hashes, compared in constant time; sessions; the limiter
  of failed sign-ins;
- ``uploads``: an author's archive, checked and unpacked off the event
  loop, landed whole as their submission folder;
- ``season_folder``: what the site reads of the folder (reports, games, a
  bot's output in a game), and its record of uploads;
- ``author_page``: an author's private page, and the site's other pages, drawn;
- ``connections``: the caps on connections (from the open-file limit, and per client) and the deadlines of a
  request, at the socket;
- ``streams``: the server-sent event streams, one loop for ``/events`` and the games' feeds, and their caps;
- ``spectating``: the games in play, their feeds read by one watcher;
- ``offered``: with ``--offer-play``, games against the sample bots for visitors;
- ``page_cache``: replay pages made on demand, kept once made.

Starlette, uvicorn, Jinja2 and python-multipart are an optional extra
(``pip install 'brag-referee[serve]'``): this package's ``__init__`` and
``auth`` load none of them, so that ``referee ladder --add-author`` needs none.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import socket
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from referee.common.errors import RefereeError

if TYPE_CHECKING:
    from referee.apps.site.connections import ServeLimits

DEFAULT_PORT = 8000
LIBRARIES = {"starlette": "starlette", "uvicorn": "uvicorn", "jinja2": "jinja2", "multipart": "python-multipart"}


class ServeError(RefereeError):
    """``referee serve`` cannot start: no such folder or ladder, or the web libraries are not installed."""


def require_libraries() -> None:
    """Raise a :class:`ServeError` saying how to install the web libraries when one is missing."""
    for module, package in LIBRARIES.items():
        try:
            importlib.import_module(module)
        except ImportError:
            raise ServeError(
                f"referee serve needs Starlette, uvicorn, Jinja2 and python-multipart ({package} is missing): "
                f"pip install 'brag-referee[serve]' (or: pip install {' '.join(LIBRARIES.values())})"
            ) from None


def serve(
    target: Path,
    host: str = "127.0.0.1",
    port: int = DEFAULT_PORT,
    forwarded_allow_ips: str = "",
    offer_play: bool = False,
    limits: ServeLimits | None = None,
) -> int:
    """Serve ``target`` (a league's or ladder's output folder, or a ladder file) until interrupted; return 0.

    ``forwarded_allow_ips``: the proxies (addresses or networks, comma-separated)
    whose ``X-Forwarded-For`` and ``X-Forwarded-Proto`` are believed (the
    client's address, which failed sign-ins are counted by, and whether the
    visitor came by HTTPS); none by default, so that no process of the
    machine (a build, a bot with the host's network) passes for a proxy.
    ``offer_play``: visitors play the league's game against the sample bots at ``/play/``
    (:mod:`referee.apps.site.offered`).
    ``limits``: the caps on connections and streams and the deadlines of a request
    (:mod:`referee.apps.site.connections`); by default from the open-file limit, raised first as far as allowed.
    """
    require_libraries()
    import uvicorn

    from referee.apps.site.app import create_app
    from referee.apps.site.auth import trusted_proxies
    from referee.apps.site.connections import (
        HEADER_BYTES,
        ConnectionGuard,
        GuardedServer,
        ServeLimits,
        TrustedProxies,
        guarded_protocol,
        raise_open_file_limit,
    )
    from referee.apps.site.streams import StreamCaps

    proxies = trusted_proxies(forwarded_allow_ips)  # refused before anything starts
    app = create_app(target, offer_play=offer_play)
    _check_address(host, port)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s referee serve: %(message)s", "%Y-%m-%d %H:%M:%S"))
    log = logging.getLogger("referee.apps.site")
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    limits = limits or ServeLimits.for_open_files(raise_open_file_limit())
    app.state.stream_caps = StreamCaps.of(limits)
    guard = ConnectionGuard(limits)
    where = f"http://{host}:{port}/"
    print(f"serving {app.state.site.described} at {where}leaderboard.html (Ctrl-C stops)", flush=True)
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        timeout_graceful_shutdown=1,
        proxy_headers=bool(proxies),
        forwarded_allow_ips=proxies,
        server_header=False,
        # The caps and deadlines of referee.apps.site.connections, on uvicorn's HTTP/1.1 protocol. Not uvicorn's
        # limit_concurrency: at its limit it refuses every newcomer, where the guard sheds an idle connection.
        http=guarded_protocol(guard),
        ws="none",
        timeout_keep_alive=limits.keep_alive_s,
        backlog=limits.accept_batch,
        h11_max_incomplete_event_size=HEADER_BYTES,
    )
    guard.trusted = TrustedProxies(config.forwarded_allow_ips if config.proxy_headers else [])
    server = GuardedServer(config)
    with contextlib.suppress(KeyboardInterrupt):  # uvicorn stops on Ctrl-C, then passes the signal on
        server.run()
    print("stopped", flush=True)
    return 0


def _check_address(host: str, port: int) -> None:
    """Refuse an address that cannot be listened on, with a sentence rather than the server's log."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise ServeError(f"--host {host}: not an address of this machine ({error.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            raise ServeError(
                f"cannot listen on {host}:{port}: {error.strerror or error}; choose another with --port"
            ) from None
