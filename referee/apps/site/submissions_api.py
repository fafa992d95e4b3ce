"""``/api/submissions``: an author's upload (``POST``: their bot folder's archive, by token or from their page) and
their versions (``GET``, as JSON, for their CI).

An upload is refused before its body is read where it can be (the author's uploads too many or too frequent,
:func:`referee.apps.site.uploads.admit`), and as it arrives past the ladder's ``uploads.archive_mb``, whatever its
``Content-Length`` said; one upload of an author lands at a time (:meth:`referee.apps.site.served.Site.landing`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import IO

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive

from referee.apps.ladder.entries import bot_name
from referee.apps.ladder.file import MB, Ladder
from referee.apps.site import author_page as pages
from referee.apps.site.season_folder import record_upload, versions_of
from referee.apps.site.served import (
    UPLOAD_PATH,
    Refused,
    Site,
    author_page_url,
    client_address,
    tests_url,
    upload_url,
    wants_html,
)
from referee.apps.site.signing_in import SESSION
from referee.apps.site.uploads import TOO_LARGE, Landed, UploadRefused, admit, land
from referee.common.http_headers import NO_STORE

log = logging.getLogger(__name__)

FORM_OVERHEAD = 64 * 1024  # a multipart form's own bytes around the archive
CHUNK = 256 * 1024


def submission_routes(site: Site) -> list[Route]:
    """``POST /api/submissions`` (an upload) and ``GET /api/submissions`` (the author's versions)."""

    async def upload(request: Request) -> Response:
        if not request.user.is_authenticated:
            error = "sign in: send your token as Authorization: Bearer TOKEN, or upload from your page"
            return JSONResponse({"error": error}, 401, headers=Refused(401, "").headers())
        author = request.user.display_name
        if site.ladder is None:
            error = "this server takes no uploads: the organiser serves the ladder's folder without its ladder file"
            return JSONResponse({"error": error}, 409)
        if (site.ladder.submissions / author).resolve() == site.output:  # the ladder's own output: never replaced
            error = f"author {author!r}: the ladder's output folder has this name; the organiser must rename one"
            return JSONResponse({"error": error}, 409)
        return await _upload(site, site.ladder, request, author)

    async def my_submissions(request: Request) -> Response:
        if not request.user.is_authenticated:
            return JSONResponse(
                {"error": "sign in: Authorization: Bearer TOKEN"}, 401, headers=Refused(401, "").headers()
            )
        author = request.user.display_name
        page = author_page_url(request, author)
        return JSONResponse(await asyncio.to_thread(pages.versions_json, site.output, author, page), headers=NO_STORE)

    return [
        Route(f"/{UPLOAD_PATH}", upload, methods=["POST"]),
        Route(f"/{UPLOAD_PATH}", my_submissions, methods=["GET"]),
    ]


async def _upload(site: Site, ladder: Ladder, request: Request, author: str) -> Response:
    """Land the author's upload, one at a time, and say what becomes of it: judged already (200), or waiting (202);
    a refusal as the author's page for a browser signed in, else as JSON."""
    output, client = site.output, client_address(request)
    from_page = SESSION in request.auth.scopes and wants_html(request)
    async with site.landing(author):
        try:
            await asyncio.to_thread(admit, output, author, ladder.uploads)  # before the body is read
            with tempfile.TemporaryDirectory(prefix="referee-upload-") as scratch:
                archive = Path(scratch) / "archive"
                size = await _receive(request, archive, ladder.uploads.archive_bytes)
                landed = await asyncio.to_thread(land, archive, ladder.submissions, author, ladder.uploads)
        except UploadRefused as refusal:
            log.info("%s: an upload by %s refused: %s", client, author, refusal)
            retry = {"Retry-After": str(math.ceil(refusal.retry_after))} if refusal.retry_after else {}
            if from_page:
                html = await asyncio.to_thread(
                    pages.author, site.page_sources, author, upload_url(request), str(refusal), tests_url(request)
                )
                return HTMLResponse(html, refusal.status, headers={**NO_STORE, **retry})
            return JSONResponse({"error": str(refusal)}, refusal.status, headers=retry)
        record_upload(output, author, landed.digest, size)
    answer, code = _landed_answer(output, author, landed, author_page_url(request, author), ladder.poll_s)
    log.info("%s: an upload by %s landed (%d bytes, digest %s): %s", client, author, size, landed.digest[:12],
             answer["status"])  # fmt: skip
    if from_page:
        return RedirectResponse(answer["follow"], 303)
    return JSONResponse(answer, code, headers=NO_STORE)


def _landed_answer(output: Path, author: str, landed: Landed, follow: str, poll_s: float) -> tuple[dict[str, str], int]:
    """What an upload landed becomes, and the status that says it: the author's newest version already (200), or
    their next version, waiting to be judged (202)."""
    versions = versions_of(output, author)
    if versions and versions[-1].digest == landed.digest:
        version, code = versions[-1].bot, 200
        status = f"unchanged: the same content as {version}, judged already"
    else:
        version, code = bot_name(author, len(versions) + 1), 202
        status = f"waiting to be judged: the ladder looks every {poll_s:g} s"
    return {"author": author, "version": version, "digest": landed.digest, "follow": follow, "status": status}, code


async def _receive(request: Request, archive: Path, limit: int) -> int:
    """Write the uploaded archive (the body, or a form's file) to ``archive``, refusing one over ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit + FORM_OVERHEAD:
        raise _too_big(limit)
    kind = request.headers.get("content-type", "")
    with open(os.open(archive, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
        if kind.startswith("multipart/form-data"):
            capped = Request(request.scope, _capped(request.receive, limit + FORM_OVERHEAD))
            form = await capped.form(max_files=1, max_fields=4)
            files = [value for value in form.values() if isinstance(value, UploadFile)]
            if not files:
                raise UploadRefused("the form", "it holds no file; choose your bot folder's .tar.gz or .zip")
            size = await _copy(files[0].read, out, limit)
        else:
            chunks = request.stream()
            size = await _copy(lambda _: anext(chunks, b""), out, limit)
    if size == 0:
        raise UploadRefused("the request", "it holds no archive; send your bot folder as a .tar.gz or .zip")
    return size


async def _copy(read: Callable[[int], Awaitable[bytes]], out: IO[bytes], limit: int) -> int:
    size = 0
    while chunk := await read(CHUNK):
        size += len(chunk)
        if size > limit:
            raise _too_big(limit)
        out.write(chunk)
    return size


def _capped(receive: Receive, limit: int) -> Receive:
    """``receive``, refusing a body that grows past ``limit`` bytes (whatever its Content-Length said)."""
    received = 0

    async def capped() -> Message:
        nonlocal received
        message = await receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise _too_big(limit - FORM_OVERHEAD)
        return message

    return capped


def _too_big(limit: int) -> UploadRefused:
    return UploadRefused(
        "the archive",
        f"it is over the limit of {limit // MB} MB (uploads.archive_mb); leave out what the bot needs neither to "
        "build nor to run",
        TOO_LARGE,
    )
