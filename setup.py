"""The course's notebooks ride in the wheel: a build step copies them into the package.

Everything else about the package is in pyproject.toml. The lectures and the student exercises of
both editions (``notebooks/``, ``exercises/``, ``zh/notebooks/``, ``zh/exercises/``) are copied
into ``gather_course/_material/`` of the built package, so ``pip install gather-course`` and
``gather-course start`` work with no clone. ``solutions/`` never ships (tests/test_wheel.py
checks the wheel). An editable install reads the notebooks from the checkout instead.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
# What a learner's working copy is made of: gather_course/course/_workcopy.course_files.
MATERIAL = [
    "notebooks/*.ipynb",
    "exercises/*/*.ipynb",
    "zh/notebooks/*.ipynb",
    "zh/exercises/*/*.ipynb",
]


class BuildWithCourse(build_py):
    """build_py, then the course's notebooks into ``gather_course/_material/``."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the checkout's own folders
        target = Path(self.build_lib) / "gather_course" / "_material"
        found = [p for pattern in MATERIAL for p in sorted(HERE.glob(pattern))]
        if not any(p.parts[-2] == "notebooks" for p in found):
            raise SystemExit(f"no lectures under {HERE}/notebooks: the wheel would hold no course")
        for src in found:  # MATERIAL names no solutions/ (tests/test_wheel.py checks the wheel)
            dst = target / src.relative_to(HERE)
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(src.read_bytes())


setup(cmdclass={"build_py": BuildWithCourse})
