"""Plays legally, after trying to open a TCP connection (``--connect HOST:PORT``) as it starts.

What happened goes to ``--record FILE`` as a JSON line
``{"connect": "HOST:PORT", "outcome": "connected" or the error}``, after the
usual start record. Tests use it to show that a bot with network isolation
cannot reach the referee's network.
"""

from __future__ import annotations

import socket

import _common

CONNECT_TIMEOUT_SECONDS = 5.0


def try_connect(target: str) -> str:
    host, port = target.rsplit(":", 1)
    try:
        with socket.create_connection((host, int(port)), timeout=CONNECT_TIMEOUT_SECONDS) as connection:
            connection.sendall(b"hello from a bot\n")
    except OSError as error:
        return f"{type(error).__name__}: {error}"
    return "connected"


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--connect", required=True, help="HOST:PORT to try")
    options.set_defaults(at="")
    arguments = _common.parse(options)
    outcome = try_connect(arguments.connect)
    if arguments.record:
        _common._append(arguments.record, {"connect": arguments.connect, "outcome": outcome})
    _common.run(_common.LegalServicer(arguments, "net-probe"))
