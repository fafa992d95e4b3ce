"""An author's upload: an archive from a stranger, checked, unpacked and landed whole as their submission folder.

An author (authenticated by the web server) sends a ``.tar.gz``, ``.tar`` or ``.zip`` of their bot's folder; the
server writes it to a temporary file and calls :func:`land` in a thread, off its event loop. Until checked, the
archive is hostile. tarfile's ``data`` filter (PEP 706) is where the checks start, not where they end; each threat
below is refused, never repaired:

- Writing outside the folder: absolute paths, ``..``, a path through a link unpacked before it, a link that leads
  out, directly, through other links, or out and back in (what that reaches depends on the folder's name, which
  changes as it lands). Links are judged by following them over the unpacked tree as the system would, not by
  their text; and every folder and file is made relative to a directory descriptor opened without following
  links, so that nothing is written through a link whatever a check missed.
- What a submission never holds: hard links, devices, FIFOs, sparse and other special members, set-user-ID,
  set-group-ID and sticky bits. Of owners and modes only the owner's executable bit is kept: files get 0644 or
  0755, folders 0755.
- Ambiguity: a path twice; a name empty, holding NUL (which tarfile and zipfile cut short without a word) or a
  backslash, or not UTF-8; an encrypted zip member.
- Exhaustion: the archive's size is checked before it is read; bytes are counted as they are written, never
  taken from the sizes an archive declares (gzip and zip bombs); zip members may not share their data (the
  overlapping zip bomb); a tar stream is never decompressed past what its files could need (a bomb in a pax
  header or the padding), nor an extended header (a long name) read past 256 KB; entries (each inode: the folders
  a path implies count) and depth are limited, a zip's before zipfile reads its directory (which costs some 15 times
  its bytes in memory), from what its end record says of it.
- Damage: tarfile takes a damaged or cut-short header for the archive's end; here it is refused, as is a gzip
  stream cut short or failing its checksum, and a zip member failing its CRC.
- A version half landed: the archive is unpacked into a staging folder beside the submissions, then swapped in by
  one rename (an exchange with the old version when there is one), one landing at a time (a lock on the staging
  folder, which leaves no file behind), so that the ladder reads the old version or the new one, whole, and a
  refused upload changes nothing.

Every refusal is an :class:`UploadRefused`: one line saying what was wrong, where, and what is allowed, and no
path of this machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import gzip
import io
import itertools
import json
import math
import os
import re
import secrets
import shutil
import stat
import struct
import tarfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import BinaryIO, Literal, Self

from referee.apps.ladder.file import MB, UploadLimits
from referee.apps.site.season_folder import UPLOADS_FILE, versions_of
from referee.common.errors import RefereeError
from referee.common.printable import printable
from referee.leaguefile.config import MANIFEST_NAME, NAME_PATTERN, NAME_RULE
from referee.leaguefile.submissions import folder_digest

UPLOADS_DIR = ".uploads"  # SUBMISSIONS/.uploads/: the staging folders, hidden from the ladder by its dot
_STAGING = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.[0-9a-f]{16}")  # AUTHOR.RANDOM
FORMATS = "a gzip-compressed tar (.tar.gz, .tgz), a plain tar (.tar) or a zip (.zip)"
TOO_LARGE = 413  # the HTTP status of an upload over a limit on its size
UNPROCESSABLE = 422  # of any other refusal
TOO_MANY_VERSIONS = 409  # an author with as many versions as the ladder keeps for one
TOO_MANY_REQUESTS = 429  # an author with as many uploads in the last hour as the ladder takes
_HOUR = timedelta(hours=1)

_NAME_BYTES = 255  # one name of a path, as Linux's file systems take it
_PATH_BYTES = 1024  # a path or a link's target: far below PATH_MAX, even under the submissions folder's path
_NAMES = (
    f"names and link targets are UTF-8 text without NUL or backslash, of at most {_NAME_BYTES} bytes a name and "
    f"{_PATH_BYTES} a path"
)
_ONLY_FILES_FOLDERS_LINKS = "an upload may hold only regular files, folders and symbolic links"
_LEAVE_OUT = "leave out what the bot needs neither to build nor to run"
_AS_MADE = "upload the archive whole, as it was made"
_CHUNK_BYTES = 1 << 20
_LINKS_FOLLOWED = 40  # as many as Linux follows in one path before it gives up (ELOOP)
_TAR_BYTES_PER_ENTRY = 8 * 1024  # more than an honest tar spends on one entry's headers, pax records and padding
_TAR_END_BYTES = 1 << 20  # more than the end-of-archive blocks and the last record's padding
# An extended header holds a name, a link's target and attributes: far less than this, unless it carries a file's
# extended attributes (a macOS tar's resource forks), which no bot needs.
_TAR_HEADER_BYTES = 256 * 1024
_TAR_EXTENDED_HEADERS = {
    tarfile.XHDTYPE: "a pax extended header",
    tarfile.XGLTYPE: "a pax global header",
    tarfile.SOLARIS_XHDTYPE: "a Solaris extended header",
    tarfile.GNUTYPE_LONGNAME: "a GNU long name",
    tarfile.GNUTYPE_LONGLINK: "a GNU long link target",
}
_ZIP_END_SEARCH_BYTES = 22 + 65_535  # a zip's end record, and the longest comment after it
_ZIP_DIRECTORY_BYTES_PER_ENTRY = 46 + 3 * 1024  # an entry's fixed part, and more name, extra and comment than any
_SHOWN_CHARACTERS = 200  # of a name in a message
_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_SPECIAL_BITS = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX
_ZIP_ENCRYPTED, _ZIP_UTF8 = 0x1, 0x800  # general purpose flag bits
_ZIP_FROM_UNIX = 3  # create_system: the high half of external_attr is a Unix mode
_ZIP_LOCAL_HEADER_BYTES = 30
_RENAME_EXCHANGE = 2  # renameat2's flag, from linux/fs.h
_RAW_BYTE = re.compile("[\udc80-\udcff]")  # a byte that was not UTF-8, kept by the surrogateescape error handler
_TAR_TYPES_REFUSED = {
    tarfile.LNKTYPE: "a hard link",
    tarfile.CHRTYPE: "a character device",
    tarfile.BLKTYPE: "a block device",
    tarfile.FIFOTYPE: "a FIFO (named pipe)",
    tarfile.GNUTYPE_SPARSE: "a sparse file",
}
_UNIX_TYPES_REFUSED = {
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFSOCK: "a socket",
}
# What reading a damaged archive raises, from the formats' modules and the decompressors under them (tarfile
# reads a chain of extended headers by recursion); and where nothing is written, what a zip's offsets out of the
# file or its features not read here raise.
_DAMAGE = (tarfile.TarError, zipfile.BadZipFile, EOFError, zlib.error, RecursionError)
_DAMAGE_READING = (*_DAMAGE, OSError, NotImplementedError)

Kind = Literal["file", "folder", "link"]


class UploadRefused(RefereeError):
    """An upload not landed: one line saying what and where; ``status`` is the HTTP status to answer (413 when a
    limit on size is over, 422 otherwise)."""

    def __init__(self, where: str, problem: str, status: int = UNPROCESSABLE, retry_after: float = 0.0) -> None:
        self.status = status
        self.retry_after = retry_after  # seconds, for a refusal that time lifts (429)
        super().__init__(f"upload refused: {where}: {problem}")


@dataclass(frozen=True)
class Landed:
    """An upload landed: whose, where, and the digest the ladder will find for it."""

    author: str
    folder: Path  # SUBMISSIONS/AUTHOR
    digest: str  # referee.leaguefile.submissions.folder_digest of what landed


def land(archive: Path, submissions: Path, author: str, limits: UploadLimits) -> Landed:
    """Unpack ``archive`` into a staging folder inside ``submissions`` and swap it in whole as ``submissions/author``."""
    if not NAME_PATTERN.match(author):
        raise UploadRefused(f"author {_shown(author)}", f"not a name a submission's folder may have: {NAME_RULE}")
    with _opened(submissions, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC) as submissions_fd:
        _has_folder(submissions_fd, author)  # refused before any work; looked at again as it is swapped in
        with contextlib.suppress(FileExistsError):
            os.mkdir(UPLOADS_DIR, 0o700, dir_fd=submissions_fd)
        with _opened(UPLOADS_DIR, _DIRECTORY, submissions_fd) as uploads_fd, _locked(uploads_fd):
            # Locked from the start, not for the swap alone, or a small upload sent after a large one could land
            # first and then be replaced by the older version.
            for name in filter(_STAGING.fullmatch, os.listdir(uploads_fd)):  # left by a crash: none is under way
                shutil.rmtree(name, ignore_errors=True, dir_fd=uploads_fd)
            staging = f"{author}.{secrets.token_hex(8)}"
            _make_folder(uploads_fd, staging)
            try:
                with _opened(staging, _DIRECTORY, uploads_fd) as staging_fd:
                    _unpack_at(archive, staging_fd, limits)
                digest = folder_digest(submissions / UPLOADS_DIR / staging)
                _swap_in(uploads_fd, staging, submissions_fd, author)
            finally:  # refused: the staging folder; landed: the version it replaced (by descriptors, never a link)
                shutil.rmtree(staging, ignore_errors=True, dir_fd=uploads_fd)
    return Landed(author, submissions / author, digest)


def admit(output: Path, author: str, limits: UploadLimits, now: datetime | None = None) -> None:
    """Refuse an upload ``author`` may not make now: past ``limits.versions`` of theirs judged by the ladder in
    ``output`` (409), or ``limits.per_hour`` landed in the hour before ``now`` (429, with the seconds until the oldest
    leaves the hour); counted from the register and ``uploads.jsonl``, which outlive a restart of the server."""
    who = f"author {_shown(author)}"
    if (judged := len(versions_of(output, author))) >= limits.versions:
        raise UploadRefused(who, f"the ladder has judged {judged} versions of yours, the most it keeps for one author "
                            "(uploads.versions); ask the organiser", TOO_MANY_VERSIONS)  # fmt: skip
    now = now or datetime.now(UTC)
    landed = sorted(at for at in _uploads_landed(output, author) if at > now - _HOUR)
    if len(landed) >= limits.per_hour:
        wait = (landed[-limits.per_hour] + _HOUR - now).total_seconds()
        raise UploadRefused(who, f"{len(landed)} uploads of yours landed in the last hour, the most an author may make "
                            f"(uploads.per_hour); try again in {math.ceil(wait)} s", TOO_MANY_REQUESTS, wait)  # fmt: skip


def _uploads_landed(output: Path, author: str) -> list[datetime]:
    """When each of ``author``'s uploads landed, from ``uploads.jsonl`` (a line that does not parse is passed over)."""
    landed = []
    with contextlib.suppress(FileNotFoundError), open(output / UPLOADS_FILE, "rb") as lines:
        for line in lines:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("author") == author:
                    landed.append(datetime.fromisoformat(record["at"]))
    return landed


def unpack(archive: Path, into: Path, limits: UploadLimits) -> None:
    """Check and unpack ``archive`` into the new, empty folder ``into``; raise UploadRefused at the first problem.

    A refused archive leaves in ``into`` what was unpacked before the problem was found: remove it.
    """
    with _opened(into, _DIRECTORY) as root_fd:
        if os.listdir(root_fd):
            raise ValueError(f"{into} is not empty: an archive is unpacked into a new, empty folder")
        _unpack_at(archive, root_fd, limits)


# ----- one archive -------------------------------------------------------------------


def _unpack_at(archive: Path, root_fd: int, limits: UploadLimits) -> None:
    with open(archive, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size > limits.archive_bytes:
            problem = (
                f"it is {_mb(size)}, over the limit of {_mb(limits.archive_bytes)} (uploads.archive_mb); {_LEAVE_OUT}"
            )
            raise UploadRefused("the archive", problem, TOO_LARGE)
        unpacker = _Unpacker(root_fd, limits)
        try:
            _read_archive(file, unpacker, limits)
        except _DAMAGE:
            if unpacker.last_name is None:  # a file gzipped alone, say
                raise UploadRefused(
                    "the archive", f"it holds no tar archive, or a damaged one; upload {FORMATS}"
                ) from None
            after = f"after member {_shown(unpacker.last_name)}"
            raise UploadRefused("the archive", f"it is damaged or cut short {after}; {_AS_MADE}") from None
    lifted = _lift_wrapping_folder(root_fd)
    for parts, name in unpacker.links:
        if _leaves_folder(root_fd, parts[1:] if lifted else parts):
            raise _refused(
                name,
                "the link leads out of the folder (followed as the system would, through other links too) or round "
                "a loop of links; a link may point only inside the bot's folder, by a relative path",
            )
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISREG(_mode_at(root_fd, MANIFEST_NAME)):
            return
    raise UploadRefused(
        "the archive",
        f'no "{MANIFEST_NAME}" file at its top, nor in one folder holding everything; put {MANIFEST_NAME} at the '
        "top of the bot's folder, and archive that folder or its content",
    )


def _read_archive(file: BinaryIO, unpacker: _Unpacker, limits: UploadLimits) -> None:
    """Unpack the archive's entries, its format told by its first bytes, whatever its name."""
    head = file.read(tarfile.BLOCKSIZE)
    file.seek(0)
    if head.startswith(b"\x1f\x8b"):
        with gzip.GzipFile(fileobj=file, mode="rb") as decompressed:
            _read_tar(_MeteredStream(decompressed, limits), unpacker)
    elif head[257:262] == b"ustar":
        _read_tar(_MeteredStream(file, limits), unpacker)
    elif head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        _read_zip(file, unpacker, limits)
    else:
        raise UploadRefused("the archive", f"its content is not {FORMATS}, whatever its name; upload one of those")


class _MeteredStream(io.RawIOBase):
    """A tar stream, read forward only and never further than the files could need: a bomb in a pax header or in
    the padding is refused by what it would decompress to, before it is decompressed."""

    def __init__(self, source: BinaryIO | gzip.GzipFile, limits: UploadLimits) -> None:
        super().__init__()
        self._source = source
        self._limits = limits
        self._budget = limits.unpacked_bytes + limits.files * _TAR_BYTES_PER_ENTRY + _TAR_END_BYTES
        self._position = 0
        self.last_read = b""

    def tell(self) -> int:
        return self._position

    def read(self, size: int = -1, /) -> bytes:
        allowed = self._budget - self._position
        try:  # one byte past the budget, to tell a stream that ends there from one that goes on
            data = self._source.read(allowed + 1 if size < 0 else min(size, allowed + 1))
        except (EOFError, zlib.error, gzip.BadGzipFile):
            raise UploadRefused("the archive", f"its gzip compression is damaged or cut short; {_AS_MADE}") from None
        if len(data) > allowed:
            need = f"{_mb(self._limits.unpacked_bytes)} (uploads.unpacked_mb) in {self._limits.files} entries (uploads.files)"
            raise UploadRefused("the archive", f"its tar stream runs past what files of {need} need", TOO_LARGE)
        self._position += len(data)
        self.last_read = data
        return data

    def seek(self, offset: int, whence: int = os.SEEK_SET, /) -> int:
        # tarfile skips only forward (over padding); what it skips is read, so that it is counted too.
        if whence != os.SEEK_SET or offset < self._position:
            raise io.UnsupportedOperation("a tar stream is read forward only")
        while self._position < offset and self.read(min(offset - self._position, _CHUNK_BYTES)):
            pass
        return self._position


class _BoundedHeaderInfo(tarfile.TarInfo):
    """A tar member whose extended header (a pax header, a GNU long name or link) is refused by the size its header
    block declares, before tarfile reads that much into memory; an old GNU sparse member, whose chain of extension
    blocks tarfile would also gather in memory, is refused there too."""

    @classmethod
    def frombuf(cls, buf: bytes | bytearray, encoding: str, errors: str) -> Self:
        info = super().frombuf(buf, encoding, errors)
        if info.type == tarfile.GNUTYPE_SPARSE:
            raise _refused(info.name, f"a sparse file; {_ONLY_FILES_FOLDERS_LINKS}")
        if info.type in _TAR_EXTENDED_HEADERS and info.size > _TAR_HEADER_BYTES:
            what = _TAR_EXTENDED_HEADERS[info.type]
            raise UploadRefused(
                "the archive",
                f"it holds {what} of {_mb(info.size)}, over the {_mb(_TAR_HEADER_BYTES)} one may take (names are at "
                f"most {_PATH_BYTES} bytes); {_AS_MADE}, without extended attributes (tar --no-xattrs)",
                TOO_LARGE,
            )
        return info


def _read_tar(stream: _MeteredStream, unpacker: _Unpacker) -> None:
    with tarfile.open(fileobj=stream, mode="r:", encoding="utf-8", errors="surrogateescape",
                      tarinfo=_BoundedHeaderInfo) as tar:  # fmt: skip
        for member in tar:
            if member.type in (tarfile.REGTYPE, tarfile.AREGTYPE) and not member.issparse():
                content = tar.extractfile(member)
                assert content is not None  # a regular file's, always
                unpacker.add(member.name, "file", member.mode, read=content.read)
            elif member.isdir() or member.issym():
                unpacker.add(member.name, "folder" if member.isdir() else "link", member.mode, member.linkname)
            else:
                what = "a sparse file" if member.issparse() else _TAR_TYPES_REFUSED.get(member.type)
                what = what or f"a member of tar type {member.type.decode('latin-1')!r}"
                raise _refused(member.name, f"{what}; {_ONLY_FILES_FOLDERS_LINKS}")
    # tarfile ends quietly at a header damaged, cut short or missing, as at the archive's end: only a block of zeros,
    # the last thing it read, is the end, or half an archive would land without a word.
    if stream.last_read != bytes(tarfile.BLOCKSIZE):
        raise tarfile.ReadError("no end-of-archive block where tarfile stopped")
    while stream.read(_CHUNK_BYTES):
        pass  # on to the end of a gzip stream, where its checksum and length are checked


def _zip_directory_within(file: BinaryIO, limits: UploadLimits) -> None:
    """Refuse a zip whose directory (its end record says how many entries, how many bytes) is past the limit on
    entries, before zipfile reads it whole: a directory of tiny entries costs some 15 times its bytes in memory."""
    file.seek(0, os.SEEK_END)
    size = file.tell()
    file.seek(max(0, size - _ZIP_END_SEARCH_BYTES))
    tail = file.read()
    at = tail.rfind(b"PK\x05\x06")
    if at < 0 or len(tail) < at + 22:
        return  # zipfile says what is wrong with it
    entries, directory_bytes = struct.unpack_from("<2xHL", tail, at + 8)
    locator = at - 20
    if (
        (entries == 0xFFFF or directory_bytes == 0xFFFFFFFF)
        and locator >= 0
        and tail[locator : locator + 4] == (b"PK\x06\x07")
    ):
        (end64,) = struct.unpack_from("<Q", tail, locator + 8)
        file.seek(end64)
        record = file.read(56)
        if len(record) == 56 and record[:4] == b"PK\x06\x06":
            entries, directory_bytes = struct.unpack_from("<QQ", record, 32)
    if entries > limits.files or directory_bytes > limits.files * _ZIP_DIRECTORY_BYTES_PER_ENTRY:
        limit = f"more than {limits.files} files, folders and links (uploads.files)"
        raise UploadRefused("the archive", f"its directory lists {limit}; {_LEAVE_OUT}", TOO_LARGE)
    file.seek(0)


def _read_zip(file: BinaryIO, unpacker: _Unpacker, limits: UploadLimits) -> None:
    _zip_directory_within(file, limits)
    try:
        archive = zipfile.ZipFile(file)
    except UnicodeDecodeError as error:  # a name marked UTF-8 that is not
        raise _refused(
            error.object.decode("utf-8", "surrogateescape"), f"its name is not UTF-8 text; {_NAMES}"
        ) from None
    except (*_DAMAGE_READING, ValueError):
        problem = "its zip directory is damaged, cut short or made with features not read here"
        raise UploadRefused("the archive", f"{problem}; {_AS_MADE}, by a common zip tool") from None
    with archive:
        members = archive.infolist()
        for first, second in itertools.pairwise(sorted(members, key=lambda info: info.header_offset)):
            if second.header_offset < first.header_offset + _ZIP_LOCAL_HEADER_BYTES + first.compress_size:
                raise _refused(
                    _zip_name(second),
                    f"its data overlaps that of member {_shown(_zip_name(first))} (a zip bomb's trick); "
                    "each member's data must stand apart",
                )
        for info in members:
            name = _zip_name(info)
            if info.flag_bits & _ZIP_ENCRYPTED:
                raise _refused(name, "it is encrypted; upload a zip made without a password")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                method = info.compress_type
                raise _refused(name, f"compressed by method {method}; a zip's members may be stored or deflated")
            mode = info.external_attr >> 16 if info.create_system == _ZIP_FROM_UNIX else 0
            kind = stat.S_IFMT(mode)
            if kind in _UNIX_TYPES_REFUSED:
                raise _refused(name, f"{_UNIX_TYPES_REFUSED[kind]}; {_ONLY_FILES_FOLDERS_LINKS}")
            if kind == stat.S_IFDIR or (kind == 0 and name.endswith("/")):
                unpacker.add(name, "folder", mode)
                continue
            try:
                content = archive.open(info)
            except _DAMAGE_READING:
                problem = "its header is damaged or made with features not read here"
                raise _refused(name, f"{problem}; {_AS_MADE}, by a common zip tool") from None
            with content:
                if kind == stat.S_IFLNK:
                    target = _read_damaged(name, content.read, _PATH_BYTES + 1)
                    unpacker.add(name, "link", mode, target.decode("utf-8", "surrogateescape"))
                else:
                    unpacker.add(name, "file", mode, read=content.read)


def _zip_name(info: zipfile.ZipInfo) -> str:
    # orig_filename: zipfile cuts a name at a NUL. A name not marked UTF-8 was read as cp437, yet authors' tools
    # write UTF-8 without the mark: the bytes are read again as UTF-8, and those that are not kept to be refused.
    if info.flag_bits & _ZIP_UTF8:
        return info.orig_filename
    return info.orig_filename.encode("cp437").decode("utf-8", "surrogateescape")


def _read_damaged(name: str, read: Callable[[int], bytes], size: int) -> bytes:
    """``read(size)`` of member ``name``, refusing the member if the archive is damaged there."""
    try:
        return read(size)
    except _DAMAGE_READING:
        raise _refused(name, f"the archive is damaged or cut short in this member; {_AS_MADE}") from None


class _Unpacker:
    """Checks each entry and makes it under the folder open as ``root_fd``, never through a link, counting what it
    writes."""

    def __init__(self, root_fd: int, limits: UploadLimits) -> None:
        self._root_fd = root_fd
        self._limits = limits
        self._entries = self._unpacked_bytes = 0
        self._made: dict[tuple[str, ...], Kind] = {}  # every path made, with the folders an entry's path implies
        self._listed: set[tuple[str, ...]] = set()  # the paths the archive listed
        self.links: list[tuple[tuple[str, ...], str]] = []  # each link's path, and its name as the archive wrote it
        self.last_name: str | None = None

    def add(
        self, name: str, kind: Kind, mode: int, target: str = "", read: Callable[[int], bytes] | None = None
    ) -> None:
        self.last_name = name
        parts = self._placed(name, kind)
        if not (kind == "folder" and parts in self._made):  # a folder its paths implied was counted when made
            self._count(name)
        if mode & _SPECIAL_BITS:
            raise _refused(
                name,
                f"its mode {stat.S_IMODE(mode):04o} has the set-user-ID, set-group-ID or sticky bit; an upload's "
                "files may have only read, write and execute permissions",
            )
        if kind == "link" and (problem := _text_problem(target, "target")) is not None:
            raise _refused(name, f"{problem}; {_NAMES}")
        if kind == "link" and target.startswith("/"):
            where = f"a link to the absolute path {_shown(target)}"
            raise _refused(name, f"{where}; a link may point only inside the bot's folder, by a relative path")
        if not parts:  # "." or "./": the top itself, the folder unpacked into
            if kind == "folder":
                return
            raise _refused(name, "it names the top of the archive, which can only be a folder")
        try:
            with self._parent(parts, name) as parent_fd:
                if kind == "folder" and parts not in self._made:
                    _make_folder(parent_fd, parts[-1])
                elif kind == "link":  # as it is: where it leads is judged once everything is made
                    os.symlink(target, parts[-1], dir_fd=parent_fd)
                    self.links.append((parts, name))
                elif kind == "file":
                    assert read is not None  # a file's, always
                    self._write(name, parts[-1], parent_fd, mode, read)
        except OSError as error:  # a backstop: the checks above refuse each of these first
            if error.errno not in (errno.EEXIST, errno.ELOOP, errno.ENOTDIR):
                raise
            raise _refused(name, "it collides with, or lies under, a path unpacked before it") from None
        self._made[parts] = kind
        self._listed.add(parts)

    def _count(self, name: str) -> None:
        """Count one more entry (an inode made, or an entry of the archive that makes none) against the limit."""
        self._entries += 1
        if self._entries > self._limits.files:
            limit = f"more than {self._limits.files} files, folders and links (uploads.files)"
            raise _refused(name, f"the archive holds {limit}, counting the folders its paths imply; {_LEAVE_OUT}",
                           TOO_LARGE)  # fmt: skip

    def _placed(self, name: str, kind: Kind) -> tuple[str, ...]:
        """The names of the path ``name``, once it is known to lie in the folder, once, and under folders only."""
        if (problem := _text_problem(name, "name")) is not None:
            raise _refused(name, f"{problem}; {_NAMES}")
        if name.startswith("/"):
            raise _refused(name, "an absolute path; an archive may hold only paths relative to its top")
        parts = tuple(part for part in name.split("/") if part not in ("", "."))
        if ".." in parts:
            raise _refused(name, 'a ".." in a path leaves the folder; an archive may hold only paths inside its folder')
        if len(parts) > self._limits.depth:
            raise _refused(name, f"{len(parts)} names deep, over the limit of {self._limits.depth} (uploads.depth)")
        made = self._made.get(parts)
        if parts in self._listed or (made is not None and (made, kind) != ("folder", "folder")):
            raise _refused(
                name, "it appears twice in the archive (or holds a path listed before it); a path may appear once"
            )
        for depth in range(1, len(parts)):
            if (above := self._made.get(parts[:depth], "folder")) != "folder":
                through = f"its path goes through {_shown('/'.join(parts[:depth]))}, a {above} unpacked before it"
                raise _refused(name, f"{through}; only folders may hold other entries")
        return parts

    @contextlib.contextmanager
    def _parent(self, parts: tuple[str, ...], name: str) -> Iterator[int]:
        """The folder holding ``parts``, opened folder by folder from the top, never through a link; a folder the
        path implies but the archive has not listed (yet) is made on the way."""
        fd = os.dup(self._root_fd)
        try:
            for depth in range(1, len(parts)):
                if parts[:depth] not in self._made:
                    self._count(name)
                    _make_folder(fd, parts[depth - 1])
                    self._made[parts[:depth]] = "folder"
                inner = os.open(parts[depth - 1], _DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = inner
            yield fd
        finally:
            os.close(fd)

    def _write(self, name: str, file_name: str, parent_fd: int, mode: int, read: Callable[[int], bytes]) -> None:
        with _opened(file_name, _NEW_FILE, parent_fd, 0o600) as fd:
            while chunk := _read_damaged(name, read, _CHUNK_BYTES):
                self._unpacked_bytes += len(chunk)
                if self._unpacked_bytes > self._limits.unpacked_bytes:
                    limit = f"more than {_mb(self._limits.unpacked_bytes)} (uploads.unpacked_mb)"
                    raise _refused(name, f"the files unpack to {limit} by this one; {_LEAVE_OUT}", TOO_LARGE)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(fd, view) :]
            os.fchmod(fd, 0o755 if mode & stat.S_IXUSR else 0o644)


def _text_problem(text: str, what: str) -> str | None:
    """What is wrong with a name or a link's target, wherever it is; None if nothing."""
    if not text:
        return f"its {what} is empty"
    if "\0" in text:
        return f"its {what} holds a NUL character"
    if "\\" in text:
        return f'its {what} holds a backslash (folders are separated by "/": remake an archive made on Windows)'
    try:
        encoded = text.encode()
    except UnicodeEncodeError:
        return f"its {what} is not UTF-8 text"
    if len(encoded) > _PATH_BYTES or any(len(part.encode()) > _NAME_BYTES for part in text.split("/")):
        return f"its {what} is too long"
    return None


def _lift_wrapping_folder(root_fd: int) -> bool:
    """Make the content of the one folder the archive holds the top (``tar czf bot.tar.gz mybot/``, GitHub's zips)
    if it holds the manifest and the top does not; whether it did."""
    names = os.listdir(root_fd)
    if MANIFEST_NAME in names or len(names) != 1 or not stat.S_ISDIR(_mode_at(root_fd, names[0])):
        return False
    with _opened(names[0], _DIRECTORY, root_fd) as wrapper_fd:
        inside = os.listdir(wrapper_fd)
        if MANIFEST_NAME not in inside:
            return False
        aside = f".wrapper-{secrets.token_hex(8)}"  # out of the way of the names inside, its own among them
        os.rename(names[0], aside, src_dir_fd=root_fd, dst_dir_fd=root_fd)
        for name in inside:
            os.rename(name, name, src_dir_fd=wrapper_fd, dst_dir_fd=root_fd)
    os.rmdir(aside, dir_fd=root_fd)
    return True


def _leaves_folder(root_fd: int, link: tuple[str, ...]) -> bool:
    """Whether the link at ``link``, followed name by name as the system would, through other links too, ever
    climbs above the folder (even to come back: what it reaches then depends on the folder's name), or loops."""
    reached = list(link[:-1])  # folders, never links: no entry lies under a link
    to_follow = list(reversed(os.readlink("/".join(link), dir_fd=root_fd).split("/")))
    followed = 0
    while to_follow:
        part = to_follow.pop()
        if part == "..":
            if not reached:
                return True
            reached.pop()
        elif part not in ("", "."):
            reached.append(part)
            try:
                mode = _mode_at(root_fd, "/".join(reached))
            except (FileNotFoundError, NotADirectoryError):
                continue  # leads nowhere from here: harmless
            if stat.S_ISLNK(mode):
                followed += 1
                if followed > _LINKS_FOLLOWED:
                    return True
                to_follow.extend(reversed(os.readlink("/".join(reached), dir_fd=root_fd).split("/")))
                reached.pop()
    return False


# ----- landing -----------------------------------------------------------------------


@contextlib.contextmanager
def _locked(uploads_fd: int) -> Iterator[None]:
    """One landing at a time, across threads and processes: a lock on the staging folder itself (each open of it
    has its own), which leaves no file behind in the submissions folder."""
    fcntl.flock(uploads_fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(uploads_fd, fcntl.LOCK_UN)


def _has_folder(submissions_fd: int, author: str) -> bool:
    """Whether the author has a folder already; never through a link, nor over anything but a folder."""
    try:
        mode = _mode_at(submissions_fd, author)
    except FileNotFoundError:
        return False
    if not stat.S_ISDIR(mode):
        problem = "the submissions folder holds something other than a folder under this name"
        raise UploadRefused(
            f"author {_shown(author)}", f"{problem}; the organiser must remove it for an upload to land"
        )
    return True


def _swap_in(uploads_fd: int, staging: str, submissions_fd: int, author: str) -> None:
    """Put the staging folder in place as the author's folder in one step; the old version, if any, takes the
    staging folder's place."""
    if not _has_folder(submissions_fd, author):
        os.rename(staging, author, src_dir_fd=uploads_fd, dst_dir_fd=submissions_fd)
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(uploads_fd, staging.encode(), submissions_fd, author.encode(), _RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, f"renameat2(RENAME_EXCHANGE) of {author}: {os.strerror(code)}")


# ----- helpers -----------------------------------------------------------------------


@contextlib.contextmanager
def _opened(path: str | Path, flags: int, dir_fd: int | None = None, mode: int = 0o777) -> Iterator[int]:
    fd = os.open(path, flags, mode, dir_fd=dir_fd)
    try:
        yield fd
    finally:
        os.close(fd)


def _make_folder(parent_fd: int, name: str) -> None:
    os.mkdir(name, 0o700, dir_fd=parent_fd)
    with _opened(name, _DIRECTORY, parent_fd) as fd:
        os.fchmod(fd, 0o755)  # whatever the process's umask


def _mode_at(dir_fd: int, path: str) -> int:
    return os.stat(path, dir_fd=dir_fd, follow_symlinks=False).st_mode


def _mb(size: int) -> str:
    """A size as people read it: ``20 MB``, ``20.4 MB``, ``3.2 KB``, ``512 bytes``."""
    if size >= MB:
        return f"{size / MB:.1f} MB".replace(".0 MB", " MB")
    if size >= 1024:
        return f"{size / 1024:.1f} KB".replace(".0 KB", " KB")
    return f"{size} bytes"


def _refused(name: str, problem: str, status: int = UNPROCESSABLE) -> UploadRefused:
    return UploadRefused(f"member {_shown(name)}", problem, status)


def _shown(name: str) -> str:
    """A name as an archive wrote it, quoted on one line, safe on a terminal, bytes that are not UTF-8 as \\xNN."""
    quoted = json.dumps(name[:_SHOWN_CHARACTERS], ensure_ascii=False)
    quoted = _RAW_BYTE.sub(lambda raw: f"\\x{ord(raw[0]) - 0xDC00:02x}", quoted)
    return printable(quoted) + ("…" if len(name) > _SHOWN_CHARACTERS else "")
