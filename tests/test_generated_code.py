"""The committed protocol code in referee/v2/ is exactly what proto/ generates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GENERATED = ("bot_pb2.py", "bot_pb2.pyi", "bot_pb2_grpc.py")


def test_regenerating_from_the_proto_changes_nothing(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{ROOT / 'proto'}",
            f"--python_out={tmp_path}",
            f"--pyi_out={tmp_path}",
            f"--grpc_python_out={tmp_path}",
            str(ROOT / "proto" / "referee" / "v2" / "bot.proto"),
        ],
        check=True,
    )
    for name in GENERATED:
        fresh = (tmp_path / "referee" / "v2" / name).read_text()
        committed = (ROOT / "referee" / "v2" / name).read_text()
        assert fresh == committed, f"referee/v2/{name} is out of date: run `make proto` and commit the result"
