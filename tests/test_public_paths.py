"""The public import paths: what bots, users and the docs import keeps working whatever the layout.

The package's folders are its layers (docs/architecture.md), so a module's real path may change; the paths bots
and users write (``referee.botkit``, ``referee.games``, ``referee.cards``, ``referee.hands``, ``referee.env``) are
thin faces that give the very objects of the module behind them. Every import statement the docs show, and every
file of the package they name, is checked here too, so a move that forgets one fails.
"""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FACES = {
    "referee.botkit": "referee.play.kit",
    "referee.cards": "referee.engine.cards",
    "referee.hands": "referee.engine.hands",
    "referee.games": "referee.engine.games",
    "referee.games.actions": "referee.engine.games.actions",
    "referee.placements": "referee.engine.placements",
}
DOCS = sorted(
    [
        ROOT / "README.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "sample_bots").rglob("*.md"),
        *(ROOT / "proto").rglob("*.md"),
    ]
)
IMPORT = re.compile(r"^\s*(from referee[\w.]* import [\w, ]+|import referee[\w.]*)\s*(?:#.*)?$", re.MULTILINE)
PACKAGE_PATH = re.compile(r"(?<![\w/.-])referee/[\w/]*[\w]+(?:\.py|/)")


@pytest.mark.parametrize(("face", "module"), sorted(FACES.items()))
def test_each_public_path_gives_the_very_objects_of_the_module_behind_it(face: str, module: str) -> None:
    public, real = importlib.import_module(face), importlib.import_module(module)
    assert public.__all__ == real.__all__ and public.__all__
    for name in real.__all__:
        assert getattr(public, name) is getattr(real, name), f"{face}.{name}"


def test_every_import_the_docs_show_works() -> None:
    statements = sorted({match.group(1).strip() for path in DOCS for match in IMPORT.finditer(path.read_text())})
    assert len(statements) > 10
    # In a fresh interpreter, as a reader would run them: one failing names itself.
    program = "\n".join(
        f"try:\n    {line}\nexcept Exception as error:\n    print({line!r}, error)" for line in statements
    )
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert run.returncode == 0 and run.stdout == "", run.stdout + run.stderr


def test_every_file_of_the_package_the_docs_name_is_there() -> None:
    named = {
        (path.relative_to(ROOT), match.group(0))
        for path in [*DOCS, ROOT / "pyproject.toml", ROOT / "Makefile"]
        for match in PACKAGE_PATH.finditer(path.read_text())
        if "_shipped" not in match.group(0) and "v2/" not in match.group(0)
    }
    assert len(named) > 20
    missing = sorted(f"{doc}: {name}" for doc, name in named if not (ROOT / name).exists())
    assert missing == []


def test_the_environments_name_their_modules_as_they_are() -> None:
    import referee.env

    for name in referee.env.__all__:
        assert getattr(referee.env, name) is not None, name
