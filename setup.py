"""Build hook only (the metadata is in pyproject.toml): copy the bundled ``tasks/`` and ``templates/`` into the
wheel as ``mrtpo_sdk/_bundled/``, so an installed package runs them without a source checkout. The repository root
stays their source of truth (see ``mrtpo_sdk/resources.py``)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".pytest_cache")


class BuildPyWithBundled(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads tasks/ and templates/ from the checkout
        for kind in ("tasks", "templates"):
            target = Path(self.build_lib) / "mrtpo_sdk" / "_bundled" / kind
            if target.exists():
                shutil.rmtree(target)
            shutil.copytree(ROOT / kind, target, ignore=SKIP)


setup(cmdclass={"build_py": BuildPyWithBundled})
