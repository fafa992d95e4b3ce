"""The one build step pyproject.toml cannot say: copy the shipped files into the package.

A wheel carries the protocol (``proto/``), the sample bots (``sample_bots/``,
sources only) and the tournaments (``tournaments/``) under
``referee/_shipped/``, where :mod:`referee.common.resources` finds them: ``referee
check-bot`` plays against the sample bots, and the demo league names them.
An editable install reads them from the source tree instead.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

SHIPPED = ("proto", "sample_bots", "tournaments")
# What a build or a run leaves in a source tree: never shipped.
LEFT_OUT = shutil.ignore_patterns("node_modules", "__pycache__", "*.pyc", "build", "results", ".git")


class BuildPyWithShippedFiles(build_py):
    """``build_py``, then the shipped folders copied to ``referee/_shipped/`` in the build."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "referee" / "_shipped"
        for name in SHIPPED:
            shutil.copytree(name, target / name, ignore=LEFT_OUT, dirs_exist_ok=True, symlinks=True)


setup(cmdclass={"build_py": BuildPyWithShippedFiles})
