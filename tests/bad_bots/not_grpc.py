"""Listens at its address but does not speak gRPC: to every connection it writes a line of text and hangs up."""

from __future__ import annotations

import socket

import _common

if __name__ == "__main__":
    args = _common.parse(_common.parser(__doc__))
    if args.address.startswith("unix:"):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(args.address.removeprefix("unix:"))
    else:
        host, port = args.address.rsplit(":", 1)
        server = socket.create_server((host, int(port)))
    server.listen()
    while True:
        connection, _ = server.accept()
        with connection:
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\nnot a bot\r\n")
