"""Leaves a mess in its writable places for the referee to clean up, then plays legally.

    plant.py --nested 3000          # a chain of 3,000 nested folders
    plant.py --files 200000         # 200,000 empty files
    plant.py --odd                  # symbolic link loops, a link out to /, folders without permissions

On the decisions ``--at`` chooses (or with ``--at-start``, before it
listens), in the folder of its socket (``/run/referee`` in its sandbox, a
host folder without it) and, with ``--in-tmp``, in ``/tmp`` (only ever in
a sandbox: the host's own ``/tmp`` is not for a test to litter). It writes ``PLANT {json}`` to its
output: what it made where, and where it stopped (a place may be full).
"""

from __future__ import annotations

import json
import os
import sys

import _common


def plant(folder: str, nested: int, files: int, odd: bool) -> dict:
    made = {"folder": folder, "nested": 0, "files": 0, "odd": False, "stopped": None}
    try:
        if nested:
            os.mkdir(os.path.join(folder, "deep"))
            fd = os.open(os.path.join(folder, "deep"), os.O_RDONLY | os.O_DIRECTORY)
            for _ in range(nested):  # relative to the last one: the path grows past what the kernel takes whole
                os.mkdir("d", dir_fd=fd)
                child = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
                os.close(fd)
                fd = child
                made["nested"] += 1
            os.close(fd)
        if files:
            many = os.path.join(folder, "many")
            os.mkdir(many)
            for number in range(files):
                os.close(os.open(os.path.join(many, str(number)), os.O_CREAT | os.O_WRONLY, 0o644))
                made["files"] += 1
        if odd:
            loop = os.path.join(folder, "loop")
            os.mkdir(loop)
            os.symlink("b", os.path.join(loop, "a"))
            os.symlink("a", os.path.join(loop, "b"))
            os.symlink("..", os.path.join(loop, "up"))
            os.symlink("/", os.path.join(loop, "root"))
            locked = os.path.join(folder, "locked", "inner")
            os.makedirs(locked)
            open(os.path.join(locked, "kept"), "w").close()
            os.chmod(locked, 0)
            os.chmod(os.path.dirname(locked), 0o500)
            made["odd"] = True
    except OSError as error:
        made["stopped"] = f"{type(error).__name__}: {error.strerror}"
    return made


class PlantingServicer(_common.LegalServicer):
    def misbehave(self, request):
        plant_everywhere(self.args)
        return _common.legal_reply(request)


def plant_everywhere(args) -> None:
    socket_folder = os.path.dirname(args.address.removeprefix("unix:")) if args.address.startswith("unix:") else None
    for folder in filter(None, (socket_folder, "/tmp" if args.in_tmp else None)):
        print("PLANT " + json.dumps(plant(folder, args.nested, args.files, args.odd)), flush=True)


if __name__ == "__main__":
    options = _common.parser(__doc__)
    options.add_argument("--nested", type=int, default=0)
    options.add_argument("--files", type=int, default=0)
    options.add_argument("--odd", action="store_true")
    options.add_argument("--at-start", action="store_true")
    options.add_argument("--in-tmp", action="store_true", help="plant in /tmp too (in a sandbox only)")
    arguments = _common.parse(options)
    sys.stdout.reconfigure(line_buffering=True)
    if arguments.at_start:
        plant_everywhere(arguments)
    _common.run(PlantingServicer(arguments, "plant"))
