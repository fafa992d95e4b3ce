"""The protocol file: `buf lint` (STANDARD rules) passes, no change breaks referee.v2 as first released
(proto/baseline/v2.json), and every copy a bot kit carries is the protocol file itself."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PROTO = ROOT / "proto" / "referee" / "v2" / "bot.proto"
BASELINE = ROOT / "proto" / "baseline" / "v2.json"
BUF = ROOT / "tools" / "node_modules" / ".bin" / "buf"
# A kit carries the protocol in its own folder: under the sandbox a bot sees nothing else.
KIT_COPIES = (
    ROOT / "sample_bots" / "node" / "kit" / "proto" / "referee" / "v2" / "bot.proto",
    ROOT / "sample_bots" / "cpp" / "proto" / "referee" / "v2" / "bot.proto",
    ROOT / "sample_bots" / "go" / "proto" / "referee" / "v2" / "bot.proto",
)


def _buf_missing() -> str | None:
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "buf comes from npm (@bufbuild/buf): install Node.js and npm, then run `make test` or `make proto-lint`"
    if BUF.exists():
        return None
    return f"{BUF.relative_to(ROOT)} is missing: run `make test` or `make proto-lint` (npm ci in tools/ installs buf)"


needs_buf = pytest.mark.skipif(_buf_missing() is not None, reason=_buf_missing() or "")


def buf(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([str(BUF), *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@needs_buf
def test_buf_lint_passes_with_the_standard_rules():
    linted = buf("lint")
    assert linted.returncode == 0 and linted.stdout == "", f"buf lint:\n{linted.stdout}{linted.stderr}"
    assert buf("ls-files").stdout.split() == ["proto/referee/v2/bot.proto"]  # the baseline is not linted


@needs_buf
def test_nothing_breaks_referee_v2_as_released():
    checked = buf("breaking", "--against", str(BASELINE))
    assert checked.returncode == 0, (
        f"proto/referee/v2/bot.proto breaks bots written against referee.v2 as released:\n{checked.stdout}{checked.stderr}"
    )


@needs_buf
def test_the_breaking_check_catches_a_changed_field_type(tmp_path):
    # The same check on a copy of proto/ where a field changed type: it must fail, naming the field.
    (tmp_path / "proto" / "referee" / "v2").mkdir(parents=True)
    shutil.copy(ROOT / "buf.yaml", tmp_path / "buf.yaml")
    changed = PROTO.read_text().replace("  uint32 decision_number = 2;", "  uint64 decision_number = 2;")
    assert changed != PROTO.read_text()
    (tmp_path / "proto" / "referee" / "v2" / "bot.proto").write_text(changed)
    checked = buf("breaking", "--against", str(BASELINE), cwd=tmp_path)
    assert checked.returncode != 0
    assert (
        'name "decision_number" on message "DecisionRequest" changed type from "uint32" to "uint64"' in checked.stdout
    )


def test_the_baseline_is_an_image_of_referee_v2():
    image = json.loads(BASELINE.read_text())
    assert [(file["name"], file["package"]) for file in image["file"]] == [("referee/v2/bot.proto", "referee.v2")]
    assert "proto/baseline/v2.json" in (ROOT / "buf.yaml").read_text()


@pytest.mark.parametrize("copy", KIT_COPIES, ids=lambda path: str(path.relative_to(ROOT / "sample_bots")))
def test_each_kit_carries_the_protocol_file_unchanged(copy):
    assert copy.is_file(), (
        f"{copy.relative_to(ROOT)} is missing: run `make proto` to copy proto/referee/v2/bot.proto there"
    )
    assert copy.read_bytes() == PROTO.read_bytes(), (
        f"{copy.relative_to(ROOT)} differs from proto/referee/v2/bot.proto: run `make proto` and commit the result"
    )
