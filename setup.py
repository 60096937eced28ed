"""Ships the workflow, its schemas and report templates, the C sources, the
configs, conda environments, profiles and reference data inside the package
(``netnoise/project/``), so that an installed netnoise runs its workflow from
any directory (netnoise.project finds them). An editable install runs from
the checkout itself and copies nothing. The rest of the build is pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

# The same list as netnoise.project.SHIPPED_DIRECTORIES (a test checks it).
SHIPPED_DIRECTORIES = ("workflow", "csrc", "config", "envs", "profiles", "resources")
LEFT_OUT = shutil.ignore_patterns("__pycache__", "*.pyc", "build", ".snakemake")


class BuildWithProject(build_py):
    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "netnoise" / "project"
        for name in SHIPPED_DIRECTORIES:
            shutil.rmtree(target / name, ignore_errors=True)
            shutil.copytree(name, target / name, ignore=LEFT_OUT)


setup(cmdclass={"build_py": BuildWithProject})
