"""Uploads: every hostile archive refused in one line, naming what and where, with nothing changed; honest archives
landed whole, in one step, with the digest the ladder will find."""

from __future__ import annotations

import bz2
import concurrent.futures
import fcntl
import functools
import gzip
import io
import json
import lzma
import os
import random
import re
import stat
import struct
import tarfile
import threading
import time
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from referee.apps.site.uploads import UPLOADS_DIR, Landed, UploadLimits, UploadRefused, land, unpack
from referee.leaguefile.submissions import folder_digest

SMALL = UploadLimits(archive_bytes=2**20, unpacked_bytes=2**20, files=50, depth=20)


@dataclass(frozen=True)
class M:
    """An archive's member, as a test writes it: a file (``data``), a folder (a name ending in "/") or a link."""

    name: str
    data: bytes = b""
    mode: int = 0o644
    target: str | None = None  # a symbolic link's
    tar_type: bytes | None = None  # a tar type written as it is (hard links, devices, FIFOs...)
    pax: dict[str, str] | None = None


MANIFEST = M("bot.yaml", b"name: sub\nversion: '1'\nrun: python bot.py\n")
HONEST = [
    MANIFEST,
    M("bot.py", b"#!/usr/bin/env python3\nprint('hello')\n", mode=0o744),  # the owner's executable bit: 0755
    M("lib/", mode=0o775),
    M("lib/util.py", b"X = 1\n", mode=0o600),  # no executable bit: 0644
    M("lib/start", target="../bot.py"),  # an internal relative link, kept as a link
    M("lib/deep/", mode=0o700),
    M("lib/deep/data.txt", b"data\n", mode=0o666),
]


def tar(members: list[M], compress: str | None = "gz", fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt, encoding="utf-8", errors="surrogateescape") as archive:
        for member in members:
            info = tarfile.TarInfo(member.name)
            info.mode, info.uid, info.gid, info.uname, info.gname = member.mode, 12345, 12345, "root", "root"
            if member.tar_type is not None:
                info.type = member.tar_type
                info.linkname = member.target or ""
            elif member.target is not None:
                info.type, info.linkname = tarfile.SYMTYPE, member.target
            elif member.name.endswith("/"):
                info.type = tarfile.DIRTYPE
            info.size = len(member.data) if info.isreg() else 0
            if member.pax is not None:
                info.pax_headers = member.pax
            archive.addfile(info, io.BytesIO(member.data) if info.isreg() else None)
    data = buffer.getvalue()
    return gzip.compress(data, mtime=0) if compress == "gz" else data


def zip_(members: list[M], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for member in members:
            info = zipfile.ZipInfo(member.name)
            folder = member.name.endswith("/")
            kind = stat.S_IFLNK if member.target is not None else stat.S_IFDIR if folder else stat.S_IFREG
            info.external_attr = (kind | member.mode) << 16
            info.compress_type = method
            archive.writestr(info, member.target.encode() if member.target is not None else member.data)
    return buffer.getvalue()


def wrapped(members: list[M], folder: str) -> list[M]:
    """The members inside one top-level folder, as ``tar czf bot.tar.gz mybot/`` and GitHub's zips make them."""
    inside = [M(f"{folder}/{member.name}", member.data, member.mode, member.target) for member in members]
    return [M(f"{folder}/", mode=0o755), *inside]


def patch_zip_header(data: bytes, name: str, flag: int = 0, new_name: bytes | None = None) -> bytes:
    """A zip's member ``name`` given general purpose ``flag`` bits, or a new name of the same length, in both its
    local and central headers: what zipfile will not write."""
    patched = bytearray(data)
    for signature, flags_at, name_length_at, name_at in ((b"PK\x03\x04", 6, 26, 30), (b"PK\x01\x02", 8, 28, 46)):
        for found in re.finditer(re.escape(signature), data):
            start = found.start()
            (length,) = struct.unpack_from("<H", data, start + name_length_at)
            if data[start + name_at : start + name_at + length] == name.encode():
                (flags,) = struct.unpack_from("<H", data, start + flags_at)
                struct.pack_into("<H", patched, start + flags_at, flags | flag)
                if new_name is not None:
                    patched[start + name_at : start + name_at + length] = new_name
    return bytes(patched)


def overlapping_zip(count: int, kernel: bytes) -> bytes:
    """David Fifield's overlapping zip bomb, stored: each member's data runs from its header to the kernel's end,
    quoting the headers of the members after it, so that a small archive unpacks to ``count`` times its size."""
    names = [f"f{index:04}".encode() for index in range(count)]
    members: list[tuple[bytes, int, int]] = []  # each member's local header, CRC and size, last first
    data = kernel
    for name in reversed(names):
        crc = zlib.crc32(data)
        fields = (b"PK\x03\x04", 20, 0, 0, 0, 0, 0x21, crc, len(data), len(data), len(name), 0)
        header = struct.pack("<4s2B4HL2L2H", *fields) + name
        members.append((header, crc, len(data)))
        data = header + data
    central = b""
    offset = 0
    for name, (header, crc, size) in zip(names, reversed(members), strict=True):
        fields = (b"PK\x01\x02", 20, 3, 20, 0, 0, 0, 0, 0x21, crc, size, size, len(name), 0, 0, 0, 0)
        central += struct.pack("<4s4B4HL2L5H2L", *fields, (stat.S_IFREG | 0o644) << 16, offset) + name
        offset += len(header)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count, count, len(central), len(data), 0)
    return data + central + end


def snapshot(folder: Path) -> dict[str, tuple[int, int, bytes | str | None, int]]:
    """Every path under ``folder``: its kind, permissions, content or link target, and owner."""
    found = {}
    for top, folders, files in os.walk(folder):
        for name in ["", *folders, *files]:
            path = Path(top, name)
            status = path.lstat()
            content: bytes | str | None = None
            if stat.S_ISLNK(status.st_mode):
                content = os.readlink(path)
            elif stat.S_ISREG(status.st_mode):
                content = path.read_bytes()
            found[str(path.relative_to(folder))] = (
                stat.S_IFMT(status.st_mode),
                stat.S_IMODE(status.st_mode),
                content,
                status.st_uid,
            )
    return found


def expected_folder(folder: Path, members: list[M]) -> Path:
    """``members`` made by hand, as an upload of them should land."""
    folder.mkdir()
    folder.chmod(0o755)
    for member in members:
        path = folder / member.name
        if member.target is not None:
            path.symlink_to(member.target)
        elif member.name.endswith("/"):
            path.mkdir()
            path.chmod(0o755)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(member.data)
            path.chmod(0o755 if member.mode & stat.S_IXUSR else 0o644)
    return folder


def submissions_with_alice_and_bob(tmp_path: Path) -> Path:
    """A submissions folder where bob's folder was put by hand and alice has landed one upload."""
    submissions = tmp_path / "submissions"
    if submissions.exists():
        return submissions
    submissions.mkdir()
    expected_folder(submissions / "bob", [MANIFEST, M("x.py", b"x")])
    (tmp_path / "first").write_bytes(tar(HONEST))
    land(tmp_path / "first", submissions, "alice", UploadLimits())
    return submissions


def refused(
    tmp_path: Path,
    archive: bytes,
    *expected: str,
    status: int = 422,
    limits: UploadLimits = SMALL,
    author: str = "alice",
) -> str:
    """Upload ``archive`` as ``author``; check that it is refused in one line holding each of ``expected`` with
    ``status``, saying nothing of this machine, and that the submissions folder is as it was, byte for byte."""
    tmp_path.mkdir(exist_ok=True)
    submissions = submissions_with_alice_and_bob(tmp_path)
    upload = tmp_path / "upload"
    upload.write_bytes(archive)
    before = snapshot(tmp_path)
    with pytest.raises(UploadRefused) as caught:
        land(upload, submissions, author, limits)
    message = str(caught.value)
    assert message.startswith("upload refused: ") and "\n" not in message, message
    for fragment in expected:
        assert fragment in message, f"{fragment!r} not in {message!r}"
    assert str(tmp_path) not in message and UPLOADS_DIR not in message and "Traceback" not in message, message
    assert not re.search(r"\.[0-9a-f]{16}", message), message  # no staging folder's name
    assert caught.value.status == status, message
    assert snapshot(tmp_path) == before
    return message


# ----- honest archives ---------------------------------------------------------------


FORMATS = {
    "tar.gz": tar,
    "tar": functools.partial(tar, compress=None),
    "zip": zip_,
    "stored zip": functools.partial(zip_, method=zipfile.ZIP_STORED),
}


@pytest.mark.parametrize("wrapping", ["top", "one folder", "dot"])
@pytest.mark.parametrize("fmt", FORMATS)
def test_an_honest_archive_lands_with_its_content_modes_links_and_digest(tmp_path, fmt, wrapping):
    members = {"top": HONEST, "one folder": wrapped(HONEST, "mybot-main"), "dot": wrapped(HONEST, ".")}
    (tmp_path / "bot.archive").write_bytes(FORMATS[fmt](members[wrapping]))  # its name says nothing of its format
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    landed = land(tmp_path / "bot.archive", submissions, "alice", UploadLimits())
    expected = expected_folder(tmp_path / "expected", HONEST)
    assert landed == Landed("alice", submissions / "alice", folder_digest(expected))
    assert folder_digest(submissions / "alice") == landed.digest
    assert snapshot(submissions / "alice") == snapshot(expected)  # 0755 and 0644, the link as a link, our own owner
    assert sorted(os.listdir(submissions)) == [UPLOADS_DIR, "alice"]
    assert os.listdir(submissions / UPLOADS_DIR) == []


def test_a_new_version_replaces_the_old_whole(tmp_path):
    submissions = submissions_with_alice_and_bob(tmp_path)
    version_2 = [MANIFEST, M("other.py", b"2")]
    (tmp_path / "v2.zip").write_bytes(zip_(version_2))
    landed = land(tmp_path / "v2.zip", submissions, "alice", UploadLimits())
    assert snapshot(submissions / "alice") == snapshot(expected_folder(tmp_path / "expected", version_2))
    assert landed.digest == folder_digest(submissions / "alice")
    assert os.listdir(submissions / UPLOADS_DIR) == []  # the old version removed
    assert (submissions / "bob" / "x.py").read_bytes() == b"x"


def test_unpack_fills_a_new_empty_folder_and_nothing_else(tmp_path):
    (tmp_path / "bot.tgz").write_bytes(tar(wrapped(HONEST, "mybot")))
    with pytest.raises(ValueError, match="not empty"):
        unpack(tmp_path / "bot.tgz", tmp_path, UploadLimits())
    (tmp_path / "into").mkdir()
    unpack(tmp_path / "bot.tgz", tmp_path / "into", UploadLimits())
    assert snapshot(tmp_path / "into") == snapshot(expected_folder(tmp_path / "expected", HONEST))


def test_the_staging_folders_left_by_a_crash_go_at_the_next_upload(tmp_path):
    submissions = submissions_with_alice_and_bob(tmp_path)
    (submissions / UPLOADS_DIR / "alice.0123456789abcdef" / "half").mkdir(parents=True)
    (submissions / UPLOADS_DIR / "bob.0123456789abcdef").mkdir()  # no landing is under way while one holds the lock
    (tmp_path / "again.tgz").write_bytes(tar(HONEST))
    land(tmp_path / "again.tgz", submissions, "alice", UploadLimits())
    assert os.listdir(submissions / UPLOADS_DIR) == []


def test_two_uploads_of_one_author_at_once_land_one_after_the_other(tmp_path):
    versions = [  # enough files for the two to overlap
        [MANIFEST, *(M(f"a/{index}.py", b"a" * index) for index in range(40))],
        [MANIFEST, *(M(f"b/{index}.py", b"b" * index) for index in range(30)), M("a/", mode=0o755)],
    ]
    expected = [
        snapshot(expected_folder(tmp_path / f"expected{index}", version)) for index, version in enumerate(versions)
    ]
    for index, version in enumerate(versions):
        (tmp_path / f"v{index}.tgz").write_bytes(tar(version))
    for round_number in range(24):
        submissions = tmp_path / f"submissions{round_number % 3}"  # a new folder, then one with a version in place
        submissions.mkdir(exist_ok=True)
        landed = land_at_once([tmp_path / "v0.tgz", tmp_path / "v1.tgz"], submissions)
        assert snapshot(submissions / "alice") in expected
        assert folder_digest(submissions / "alice") in {result.digest for result in landed}
        assert os.listdir(submissions / UPLOADS_DIR) == []


def test_an_upload_waits_while_another_process_lands_one(tmp_path):
    submissions = submissions_with_alice_and_bob(tmp_path)
    before = snapshot(submissions / "alice")
    version_2 = [MANIFEST, M("v2.py", b"2")]
    (tmp_path / "v2.tgz").write_bytes(tar(version_2))
    lock = os.open(submissions / UPLOADS_DIR, os.O_RDONLY | os.O_DIRECTORY)
    with concurrent.futures.ThreadPoolExecutor() as pool:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as another server process does while it lands an upload
        waiting = pool.submit(land, tmp_path / "v2.tgz", submissions, "alice", UploadLimits())
        time.sleep(0.5)
        assert not waiting.done() and snapshot(submissions / "alice") == before
        fcntl.flock(lock, fcntl.LOCK_UN)
        os.close(lock)
        assert waiting.result(timeout=30).digest == folder_digest(submissions / "alice")
    assert snapshot(submissions / "alice") == snapshot(expected_folder(tmp_path / "expected", version_2))


def land_at_once(archives: list[Path], submissions: Path) -> list[Landed]:
    """Land each of ``archives`` for alice from a thread of its own, all let go at the same moment."""
    start = threading.Barrier(len(archives))

    def upload(archive: Path) -> Landed:
        start.wait()
        return land(archive, submissions, "alice", UploadLimits())

    with concurrent.futures.ThreadPoolExecutor(len(archives)) as pool:
        return list(pool.map(upload, archives))  # an upload's error raised here


# ----- formats, sizes and counts -------------------------------------------------------


@pytest.mark.parametrize(
    "archive",
    [b"", os.urandom(4096), bz2.compress(tar(HONEST, None)), lzma.compress(tar(HONEST, None)), b"bot.yaml: 1\n"],
    ids=["empty", "random bytes", "tar.bz2", "tar.xz", "a yaml file"],
)
def test_an_archive_of_another_format_is_refused_saying_which_are_taken(tmp_path, archive):
    refused(tmp_path, archive, "the archive: its content is not a gzip-compressed tar", "a plain tar", "a zip")


def test_an_archive_over_its_size_is_refused_by_its_size_first(tmp_path):
    archive = tar(HONEST) + os.urandom(3000)
    limits = UploadLimits(archive_bytes=len(archive) - 1)
    refused(
        tmp_path,
        archive,
        "the archive: it is ",
        " KB, over the limit of ",
        "(uploads.archive_mb)",
        status=413,
        limits=limits,
    )


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_a_bomb_is_stopped_by_the_bytes_written_not_the_sizes_declared(tmp_path, fmt):
    bomb = [MANIFEST, M("zeros", bytes(20 * 2**20))]  # 20 MiB of zeros: about 20 KiB compressed
    archive = FORMATS[fmt](bomb)
    assert len(archive) < 100_000
    refused(tmp_path, archive, 'member "zeros": the files unpack to more than 1 MB (uploads.unpacked_mb)', status=413)


def test_files_over_the_limit_together_are_stopped_at_the_one_that_crosses_it(tmp_path):
    files = [MANIFEST, *(M(f"part{index}", os.urandom(400_000)) for index in range(3))]
    limits = UploadLimits(archive_bytes=2**22, unpacked_bytes=2**20)
    refused(tmp_path, tar(files, None), 'member "part2": the files unpack to more than', status=413, limits=limits)


def test_the_overlapping_zip_bomb_is_refused_by_its_overlap(tmp_path):
    archive = overlapping_zip(100, bytes(50_000))  # 5 MB from 55 KB, though no member is compressed
    with zipfile.ZipFile(io.BytesIO(archive)) as readable:
        if "_end_offset" in zipfile.ZipInfo.__slots__:  # zipfile's own check (Python 3.11.8 on; Debian's 3.11.2 too)
            with pytest.raises(zipfile.BadZipFile, match="Overlapped entries"):
                readable.read(readable.infolist()[0])
        else:  # a zip that zipfile itself reads without complaint
            assert sum(len(readable.read(info)) for info in readable.infolist()) > 5_000_000
    refused(tmp_path, archive, 'member "f0001": its data overlaps that of member "f0000"', limits=UploadLimits())


@pytest.mark.parametrize(
    "members, padding, expected",
    [
        pytest.param(
            [MANIFEST, M("big.txt", pax={"comment": "x" * 4 * 2**20})],
            0,
            "the archive: it holds a pax extended header of 4 MB, over the 256 KB one may take",
            id="a pax header",
        ),
        pytest.param([MANIFEST], 8 * 2**20, "the archive: its tar stream runs past", id="padding after the end"),
    ],
)
def test_a_gzip_bomb_in_the_tar_stream_is_refused_before_it_is_decompressed(tmp_path, members, padding, expected):
    archive = gzip.compress(tar(members, None) + bytes(padding))
    limits = UploadLimits(unpacked_bytes=2**20, files=10)
    refused(tmp_path, archive, expected, status=413, limits=limits)


def test_more_entries_than_the_limit_are_refused(tmp_path):
    members = [MANIFEST, *(M(f"empty{index}/") for index in range(SMALL.files))]
    refused(
        tmp_path,
        tar(members),
        f'member "empty{SMALL.files - 1}": the archive holds more than 50 files, folders and links',
        status=413,
    )


def test_a_zip_whose_directory_lists_more_entries_than_the_limit_is_refused_before_it_is_read(tmp_path):
    members = [MANIFEST, *(M(f"f{index}") for index in range(SMALL.files))]
    refused(tmp_path, zip_(members), "the archive: its directory lists more than 50 files", status=413)
    # A directory far longer than its few entries could need: refused by its bytes, whatever its count says.
    padded = io.BytesIO()
    with zipfile.ZipFile(padded, "w") as archive:
        for name in ("bot.yaml", "a", "b"):
            info = zipfile.ZipInfo(name)
            info.comment = b"c" * 8000
            archive.writestr(info, b"name: x\n")
    refused(tmp_path, padded.getvalue(), "the archive: its directory lists more than 4 files", status=413,
            limits=UploadLimits(files=4))  # fmt: skip


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_every_folder_a_path_implies_counts_toward_the_limit_on_entries(tmp_path, fmt):
    # 11 members listed, 61 inodes made: each file's path implies five folders the archive never lists.
    members = [MANIFEST, *(M(f"a{index}/b/c/d/e/f.txt", b"x") for index in range(10))]
    refused(
        tmp_path,
        FORMATS[fmt](members),
        "the archive holds more than 50 files, folders and links (uploads.files), counting the folders its paths imply",
        status=413,
    )
    lands = [MANIFEST, *(M(f"a{index}/b/c/d/e/f.txt", b"x") for index in range(8))]  # 49 entries: within 50
    (tmp_path / "fits").write_bytes(FORMATS[fmt](lands))
    land(tmp_path / "fits", tmp_path / "submissions", "ann", SMALL)


@pytest.mark.parametrize(
    "fmt, what", [(tarfile.GNU_FORMAT, "a GNU long name"), (tarfile.PAX_FORMAT, "a pax extended header")]
)
def test_a_huge_name_is_refused_by_the_size_its_header_declares_before_it_is_read(tmp_path, fmt, what):
    import tracemalloc

    name = "n" * (48 * 2**20)  # 48 MB of name: a gzip of 50 KB
    archive = gzip.compress(tar([MANIFEST, M(name, b"x")], None, fmt=fmt), mtime=0)
    assert len(archive) < 2**20
    tracemalloc.start()
    try:
        message = refused(tmp_path, archive, f"the archive: it holds {what} of 48 MB, over the 256 KB", status=413,
                          limits=UploadLimits())  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20, f"{peak / 2**20:.1f} MB in memory to refuse it ({message})"


def test_two_folders_whose_bytes_once_ran_together_land_with_two_digests(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    digests = []
    for number, files in enumerate(([M("a", b"P"), M("b", b"Q")], [M("a", b"PF\0b\0-\0Q")])):
        (tmp_path / f"upload{number}").write_bytes(tar([MANIFEST, M("bot.py", b"#"), *files]))
        digests.append(land(tmp_path / f"upload{number}", submissions, "ann", SMALL).digest)
    assert digests[0] != digests[1]


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_a_path_deeper_than_the_limit_is_refused(tmp_path, fmt):
    deep = "/".join(["d"] * 20) + "/x"
    refused(tmp_path, FORMATS[fmt]([MANIFEST, M(deep)]), f'member "{deep}": 21 names deep, over the limit of 20')


# ----- paths -------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
@pytest.mark.parametrize(
    "name, problem",
    [
        ("/etc/cron.d/x", "an absolute path; an archive may hold only paths relative to its top"),
        ("src/../../etc/x", 'a ".." in a path leaves the folder; an archive may hold only paths inside its folder'),
        ("a/../bot.yaml", 'a ".." in a path leaves the folder'),
        ("lib\\..\\..\\x", "its name holds a backslash"),
        ("x" * 256, "its name is too long"),
    ],
)
def test_a_path_that_is_absolute_climbs_or_is_ambiguous_is_refused(tmp_path, fmt, name, problem):
    where = "member " + json.dumps(name[:200])[:-1]  # as the message quotes it, cut short if long
    refused(tmp_path, FORMATS[fmt]([MANIFEST, M(name, b"x")]), where, problem)


def test_a_tar_member_without_a_name_is_refused(tmp_path):
    refused(tmp_path, tar([MANIFEST, M("")], None), 'member "": its name is empty')


@pytest.mark.parametrize("fmt", ["tar.gz", "pax", "zip", "zip marked UTF-8"])
def test_a_name_that_is_not_utf_8_is_refused(tmp_path, fmt):
    if fmt == "tar.gz":
        archive = tar([MANIFEST, M("caf\udce9.txt")], fmt=tarfile.GNU_FORMAT)  # the byte 0xe9 as it is
    elif fmt == "pax":
        archive = tar([MANIFEST, M("x", pax={"path": "caf\udce9.txt", "hdrcharset": "BINARY"})])
    elif fmt == "zip":
        archive = patch_zip_header(zip_([MANIFEST, M("cafe.txt")]), "cafe.txt", new_name=b"caf\xe9.txt")
    else:
        archive = patch_zip_header(zip_([MANIFEST, M("cafe.txt")]), "cafe.txt", flag=0x800, new_name=b"caf\xe9.txt")
    refused(tmp_path, archive, 'member "caf\\xe9.txt": its name is not UTF-8 text')


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_a_name_holding_nul_is_refused_where_the_libraries_would_cut_it_short(tmp_path, fmt):
    if fmt == "tar.gz":
        archive = tar([MANIFEST, M("bot.py", pax={"path": "bot.py\0.txt"})])
    else:
        archive = patch_zip_header(zip_([MANIFEST, M("bot.pyX.txt")]), "bot.pyX.txt", new_name=b"bot.py\0.txt")
    refused(tmp_path, archive, 'member "bot.py\\u0000.txt": its name holds a NUL character')


@pytest.mark.parametrize(
    "members, where",
    [
        ([MANIFEST, MANIFEST], 'member "bot.yaml"'),
        ([MANIFEST, M("lib/"), M("lib/")], 'member "lib'),
        ([MANIFEST, M("lib/x"), M("./lib//x")], 'member "./lib//x"'),
        ([MANIFEST, M("lib/x"), M("lib")], 'member "lib"'),
        ([MANIFEST, M("lib/"), M("lib", target="bot.yaml")], 'member "lib"'),
    ],
    ids=[
        "a file",
        "a folder",
        "one path spelled two ways",
        "a file where a folder was implied",
        "a link over a folder",
    ],
)
def test_an_entry_that_appears_twice_is_refused(tmp_path, members, where):
    refused(tmp_path, tar(members), where, "it appears twice in the archive")


def test_an_entry_twice_in_a_zip_is_refused(tmp_path):
    with pytest.warns(UserWarning, match="Duplicate name"):
        archive = zip_([MANIFEST, M("bot.py", b"1"), M("bot.py", b"2")])
    refused(tmp_path, archive, 'member "bot.py": it appears twice in the archive')


# ----- links ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
@pytest.mark.parametrize(
    "links, where, problem",
    [
        ([M("passwd", target="/etc/passwd")], 'member "passwd"', 'a link to the absolute path "/etc/passwd"'),
        ([M("up", target="../../x")], 'member "up"', "the link leads out of the folder"),
        # Inside as text ("p/q/up/../.." is "p"), out in truth: p/q/up is the top, and two above it is outside.
        (
            [M("p/q/", mode=0o755), M("p/q/up", target="../.."), M("x", target="p/q/up/../..")],
            'member "x"',
            "leads out",
        ),
        ([M("a", target="b"), M("b", target="..")], 'member "a"', "leads out of the folder"),
        ([M("a", target="b/c"), M("b", target="a")], 'member "a"', "round a loop of links"),
        ([M("empty", target="")], 'member "empty"', "its target is empty"),
    ],
    ids=["absolute", "up", "through a link", "through a chain", "a loop", "to nothing"],
)
def test_a_link_that_leads_out_is_refused_by_where_it_really_points(tmp_path, fmt, links, where, problem):
    refused(tmp_path, FORMATS[fmt]([MANIFEST, *links]), where, problem)


def test_a_link_that_climbs_out_and_back_in_is_refused_though_it_resolves_inside(tmp_path):
    (tmp_path / "upload.tgz").write_bytes(tar([MANIFEST, M("x", target="../into/bot.yaml")]))
    (tmp_path / "into").mkdir()
    with pytest.raises(UploadRefused, match='member "x": the link leads out of the folder'):
        unpack(tmp_path / "upload.tgz", tmp_path / "into", SMALL)
    assert os.path.realpath(tmp_path / "into" / "x") == str(tmp_path / "into" / "bot.yaml")  # what realpath misses


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_nothing_is_unpacked_through_a_link_even_to_a_real_folder_outside(tmp_path, fmt):
    outside = tmp_path / "outside"
    outside.mkdir()
    # From SUBMISSIONS/.uploads/alice.RANDOM/, three folders up is tmp_path.
    archive = FORMATS[fmt]([MANIFEST, M("a", target="../../../outside"), M("a/planted.sh", b"rm -rf ~")])
    refused(tmp_path, archive, 'member "a/planted.sh": its path goes through "a", a link unpacked before it')
    assert os.listdir(outside) == []


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
def test_nothing_is_unpacked_under_a_file(tmp_path, fmt):
    refused(tmp_path, FORMATS[fmt]([MANIFEST, M("f"), M("f/x")]), 'member "f/x": its path goes through "f", a file')


# ----- what a member is ------------------------------------------------------------------


@pytest.mark.parametrize(
    "tar_type, what",
    [
        (tarfile.LNKTYPE, "a hard link"),
        (tarfile.CHRTYPE, "a character device"),
        (tarfile.BLKTYPE, "a block device"),
        (tarfile.FIFOTYPE, "a FIFO (named pipe)"),
        (tarfile.GNUTYPE_SPARSE, "a sparse file"),
        (tarfile.CONTTYPE, "a member of tar type '7'"),
        (b"V", "a member of tar type 'V'"),
    ],
)
def test_a_tar_member_that_is_not_a_file_folder_or_link_is_refused(tmp_path, tar_type, what):
    member = M("odd", tar_type=tar_type, target="bot.yaml" if tar_type == tarfile.LNKTYPE else None)
    archive = tar([MANIFEST, member], fmt=tarfile.GNU_FORMAT)
    refused(
        tmp_path, archive, f'member "odd": {what}; an upload may hold only regular files, folders and symbolic links'
    )


def test_a_pax_sparse_file_is_refused(tmp_path):
    archive = tar([MANIFEST, M("odd", pax={"GNU.sparse.map": "0,0", "GNU.sparse.size": "0"})])
    refused(tmp_path, archive, 'member "odd": a sparse file')


@pytest.mark.parametrize(
    "kind, what",
    [(stat.S_IFIFO, "a FIFO (named pipe)"), (stat.S_IFCHR, "a character device"), (stat.S_IFSOCK, "a socket")],
)
def test_a_zip_member_that_is_not_a_file_folder_or_link_is_refused(tmp_path, kind, what):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("bot.yaml", MANIFEST.data)
        info = zipfile.ZipInfo("odd")
        info.external_attr = (kind | 0o644) << 16
        archive.writestr(info, b"")
    refused(tmp_path, buffer.getvalue(), f'member "odd": {what}; an upload may hold only regular files')


@pytest.mark.parametrize("fmt", ["tar.gz", "zip"])
@pytest.mark.parametrize("member", [M("tool", mode=0o4755), M("shared/", mode=0o2755), M("tmp/", mode=0o1777)])
def test_a_set_id_or_sticky_bit_is_refused(tmp_path, fmt, member):
    refused(tmp_path, FORMATS[fmt]([MANIFEST, member]), f'member "{member.name.rstrip("/")}', "its mode", "set-user-ID")


def test_an_encrypted_zip_member_is_refused(tmp_path):
    archive = patch_zip_header(zip_([MANIFEST, M("secret.py", b"x")], zipfile.ZIP_STORED), "secret.py", flag=0x1)
    refused(tmp_path, archive, 'member "secret.py": it is encrypted; upload a zip made without a password')


def test_a_zip_member_compressed_otherwise_than_by_deflate_is_refused(tmp_path):
    refused(tmp_path, zip_([MANIFEST], zipfile.ZIP_BZIP2), 'member "bot.yaml": compressed by method 12')


# ----- damage --------------------------------------------------------------------------


def damaged(archive: bytes, at: int) -> bytes:
    return archive[:at] + bytes([archive[at] ^ 0xFF]) + archive[at + 1 :]


HONEST_TGZ = tar(HONEST)
HONEST_TAR = tar(HONEST, None)
BIG_TAR = tar([MANIFEST, M("big", os.urandom(5000))], None)
SECOND_HEADER = 1024  # in HONEST_TAR, after the manifest's header and its one block of content
LONG_NAME = tarfile.TarInfo("././@LongLink")
LONG_NAME.type, LONG_NAME.size = tarfile.GNUTYPE_LONGNAME, 9
LONG_NAME_CHAIN = (LONG_NAME.tobuf(tarfile.GNU_FORMAT) + b"bot.yaml\0".ljust(512, b"\0")) * 5000 + tar([MANIFEST], None)
# A pax record of length 0: tarfile's reader takes it for the archive's end.
BAD_PAX = tar([MANIFEST, M("bot.py", b"x", pax={"comment": "hello"})], None).replace(b"17 comment", b"0 comment\0")
STORED_ZIP = zip_([MANIFEST, M("bot.py", b"print('hello')\n")], zipfile.ZIP_STORED)
GZIP_DAMAGED = "the archive: its gzip compression is damaged or cut short"
ZIP_DAMAGED = "the archive: its zip directory is damaged, cut short or made with features not read here"


def zip_field(archive: bytes, signature: bytes, offset: int, add: int, size: str = "<L") -> bytes:
    """``archive`` with ``add`` added to the field at ``offset`` in its last record starting with ``signature``."""
    patched = bytearray(archive)
    at = archive.rindex(signature) + offset
    struct.pack_into(size, patched, at, struct.unpack_from(size, archive, at)[0] + add)
    return bytes(patched)


TAR_DAMAGED = 'the archive: it is damaged or cut short after member "bot.yaml"'


@pytest.mark.parametrize(
    "archive, message",
    [
        pytest.param(HONEST_TGZ[:-4], GZIP_DAMAGED, id="gzip without its length"),
        pytest.param(HONEST_TGZ[: len(HONEST_TGZ) // 2], GZIP_DAMAGED, id="gzip cut in half"),
        # The CRC is read once the tar has ended: tarfile alone never reads it.
        pytest.param(damaged(HONEST_TGZ, len(HONEST_TGZ) - 8), GZIP_DAMAGED, id="gzip failing its CRC"),
        pytest.param(gzip.compress(os.urandom(3000)), "the archive: it holds no tar archive", id="gzip of garbage"),
        pytest.param(gzip.compress(MANIFEST.data), "the archive: it holds no tar archive", id="gzip of one file"),
        # Where tarfile would take the damage for the archive's end, and land the manifest alone.
        pytest.param(damaged(HONEST_TAR, SECOND_HEADER), TAR_DAMAGED, id="tar header failing its checksum"),
        pytest.param(HONEST_TAR[: SECOND_HEADER + 100], TAR_DAMAGED, id="tar header cut short"),
        pytest.param(BAD_PAX, 'the archive: it is damaged or cut short after member "bot.yaml"', id="tar pax record"),
        pytest.param(HONEST_TAR[:SECOND_HEADER], TAR_DAMAGED, id="tar without its end"),
        # Each GNU long name the name of the header after it: tarfile reads them by recursion.
        pytest.param(
            gzip.compress(LONG_NAME_CHAIN),
            "the archive: it holds no tar archive, or a damaged one",
            id="tar of 5000 long names chained",
        ),
        pytest.param(BIG_TAR[:3000], 'member "big": the archive is damaged or cut short in this member', id="tar data"),
        pytest.param(
            damaged(STORED_ZIP, STORED_ZIP.index(b"print('hello')")),
            'member "bot.py": the archive is damaged or cut short in this member',
            id="zip member failing its CRC",
        ),
        pytest.param(STORED_ZIP[:-30], ZIP_DAMAGED, id="zip cut short"),
        pytest.param(b"PK\x03\x04" + os.urandom(2000), ZIP_DAMAGED, id="zip of garbage"),
        # The central directory said to start 1000 bytes later than it does: each member 1000 bytes before the file.
        pytest.param(
            zip_field(STORED_ZIP, b"PK\x05\x06", 16, 1000),
            'member "bot.yaml": its header is damaged or made with features not read here',
            id="zip offsets before its start",
        ),
        pytest.param(zip_field(STORED_ZIP, b"PK\x01\x02", 6, 600, "<H"), ZIP_DAMAGED, id="zip of a version not read"),
    ],
)
def test_an_archive_damaged_or_cut_short_is_refused(tmp_path, archive, message):
    assert HONEST_TAR[SECOND_HEADER : SECOND_HEADER + 6] == b"bot.py"
    refused(tmp_path, archive, message)


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_archive_damaged_at_random_is_refused_or_lands_inside_and_nothing_else(tmp_path, fmt):
    honest = FORMATS[fmt](HONEST)
    chance = random.Random(fmt)  # the same damage at every run
    for attempt in range(40):
        archive = bytearray(honest)
        for _ in range(chance.choice([1, 2, 8])):
            at = chance.randrange(len(archive))
            if chance.random() < 0.7:
                archive[at] = chance.randrange(256)
            else:
                del archive[at : at + chance.randrange(1, 64)]
        into = tmp_path / str(attempt)
        into.mkdir()
        (tmp_path / "upload").write_bytes(archive)
        message = ""
        try:
            unpack(tmp_path / "upload", into, SMALL)
        except UploadRefused as refusal:
            message = str(refusal)
        if message:
            assert "\n" not in message and str(tmp_path) not in message, message
            continue
        for path, (kind, mode, _, _) in snapshot(into).items():
            assert (kind, mode) in {
                (stat.S_IFDIR, 0o755),
                (stat.S_IFREG, 0o644),
                (stat.S_IFREG, 0o755),
                (stat.S_IFLNK, 0o777),
            }
            assert os.path.commonpath([os.path.realpath(into / path), into]) == str(into), path


# ----- the manifest and the author -------------------------------------------------------


@pytest.mark.parametrize(
    "members",
    [
        [M("main.py")],
        wrapped([M("main.py")], "mybot"),
        wrapped(wrapped([MANIFEST], "inner"), "outer"),
        [*wrapped([MANIFEST], "one"), *wrapped([MANIFEST], "two")[1:]],
        [M("bot.yaml", target="lib/bot.yaml"), M("lib/bot.yaml", MANIFEST.data)],
        [M("bot.yaml/")],
    ],
    ids=["none", "none in the one folder", "two folders deep", "two folders", "a link", "a folder"],
)
def test_an_archive_without_the_manifest_at_its_top_is_refused(tmp_path, members):
    refused(tmp_path, tar(members), 'the archive: no "bot.yaml" file at its top, nor in one folder holding everything')


@pytest.mark.parametrize("author", ["../alice", ".hidden", "a/b", "", "alice\n"])
def test_an_author_whose_name_cannot_be_a_folder_is_refused(tmp_path, author):
    refused(
        tmp_path, tar(HONEST), f"author {json.dumps(author)}: not a name a submission's folder may have", author=author
    )


def test_an_author_folder_that_is_a_link_is_refused_and_its_target_left_alone(tmp_path):
    elsewhere = expected_folder(tmp_path / "elsewhere", [M("keep", b"k")])
    submissions = submissions_with_alice_and_bob(tmp_path)
    (submissions / "carol").symlink_to(elsewhere)
    refused(
        tmp_path,
        tar(HONEST),
        'author "carol": the submissions folder holds something other than a folder',
        author="carol",
    )
    assert os.listdir(elsewhere) == ["keep"]


def test_a_first_upload_refused_leaves_only_the_empty_staging_folder(tmp_path):
    submissions = tmp_path / "submissions"
    submissions.mkdir()
    (tmp_path / "bad.tgz").write_bytes(tar([M("main.py")]))
    with pytest.raises(UploadRefused):
        land(tmp_path / "bad.tgz", submissions, "alice", UploadLimits())
    assert snapshot(submissions).keys() == {".", UPLOADS_DIR}
