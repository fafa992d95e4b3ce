"""The wheel, built for real and installed in a fresh virtual environment: it runs with no source tree in sight.

The wheel is built from a copy of the source tree (so the build leaves
nothing in the worktree) with this environment's setuptools, and installed
without its dependencies; the fresh environment finds those (grpcio,
protobuf, ...) in this one's site-packages through a ``.pth`` line, which
adds the folder but none of its own ``.pth`` files, so the editable install
of the source tree stays out of sight. Commands run from a folder outside
the source tree.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

import referee

ROOT = Path(__file__).resolve().parent.parent
NOT_SOURCE = shutil.ignore_patterns(
    ".venv", ".git", "build", "*.egg-info", "node_modules", "results", "__pycache__", ".pytest_cache", ".hypothesis"
)


def run(command: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A wheel of the referee, installed in a fresh virtual environment."""
    base = tmp_path_factory.mktemp("packaging")
    source = base / "source"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE, symlinks=True)
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(base / "dist"),
            str(source),
        ],
        cwd=base,
    )
    [wheel] = (base / "dist").glob("*.whl")
    venv = base / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=base)
    python = venv / "bin" / "python"
    site_packages = Path(
        run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], cwd=base).stdout.strip()
    )
    (site_packages / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        cwd=base,
    )
    elsewhere = base / "elsewhere"
    elsewhere.mkdir()
    return {"wheel": wheel, "venv": venv, "python": python, "site": site_packages, "cwd": elsewhere}


def test_the_wheel_holds_the_license_the_proto_the_sample_bots_and_the_tournaments(installed) -> None:
    names = zipfile.ZipFile(installed["wheel"]).namelist()
    shipped = "referee/_shipped/"
    for expected in (
        "proto/referee/v2/bot.proto",
        "sample_bots/python/random_bot.py",
        "sample_bots/python/heuristic_bot.py",
        "sample_bots/python/brag_heuristic.py",
        "sample_bots/python/bot.yaml",
        "tournaments/demo.yaml",
        "tournaments/demo_python.yaml",
        "tournaments/league.example.yaml",
    ):
        assert shipped + expected in names
    assert not [name for name in names if "node_modules" in name or "__pycache__" in name]
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)
    assert "referee/__main__.py" in names


def test_the_wheel_marks_the_package_typed(installed) -> None:
    # PEP 561: without the marker, users' type checkers ignore the annotations of an installed package.
    assert "referee/py.typed" in zipfile.ZipFile(installed["wheel"]).namelist()


def test_the_installed_referee_runs_from_its_own_files(installed) -> None:
    python, cwd = str(installed["python"]), installed["cwd"]
    referee_command = str(installed["venv"] / "bin" / "referee")
    assert run([referee_command, "--version"], cwd).stdout == f"referee {referee.__version__}\n"
    script = "import referee, referee.common.resources as r; print(referee.__file__); print(r.sample_bot_path('random_bot.py'))"
    where = run([python, "-c", script], cwd).stdout.split()
    package = installed["site"] / "referee"
    shipped = package / "_shipped"
    assert where == [str(package / "__init__.py"), str(shipped / "sample_bots" / "python" / "random_bot.py")]

    sample_bots = shipped / "sample_bots" / "python"
    # --no-sandbox: a sandbox shows a bot the fresh environment, not the folder its dependencies come from here.
    checked = run(
        [
            referee_command,
            "check-bot",
            "--no-sandbox",
            "--game",
            "stop_the_bus",
            "--seats",
            "2",
            "--",
            "python",
            str(sample_bots / "heuristic_bot.py"),
        ],
        cwd,
    )
    assert "no problems found" in checked.stdout
    bots = [f"python {sample_bots / 'random_bot.py'}", f"python {sample_bots / 'heuristic_bot.py'}"]
    played = run(
        [
            python,
            "-m",
            "referee",
            "play",
            "--no-sandbox",
            "--game",
            "stop_the_bus",
            "--seed",
            "3",
            "--quiet",
            "--bot",
            bots[0],
            "--bot",
            bots[1],
        ],
        cwd,
    )
    assert "stop_the_bus seed 3:" in played.stdout
    validated = run([python, "-m", "referee", "validate", str(shipped / "tournaments" / "demo_python.yaml")], cwd)
    assert "valid" in validated.stdout


def test_the_license_is_the_one_pyproject_names() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License\n\nCopyright (c) the referee authors\n")
    assert "version" in project["dynamic"]  # from referee.__version__, as --version prints it
