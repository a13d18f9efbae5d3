"""Google Colab: the first code cell of every lecture and exercise installs the course there.

Colab opens a notebook straight from GitHub, with no clone and no ``pip install`` of ours, but
with its own torch and matplotlib already installed. The cell below detects Colab (its kernel
imports ``google.colab`` before any cell runs) and installs the course's package of the same
version as the notebook, without its dependencies: ``--no-deps`` keeps Colab's torch and its
Jupyter packages exactly as they are, and the notebook side of the package needs only torch,
matplotlib and Babel (an import contract in pyproject.toml keeps it so). Anywhere else the cell
does nothing. It is plain Python, not ``%pip``: the grader runs the course's locked cells and
refuses IPython syntax.
"""

from __future__ import annotations

from importlib.metadata import version

# what the notebook side imports besides the package (pyproject.toml: "notebook-side" contract)
_NOTEBOOK_DEPENDENCIES = ("babel>=2.10",)  # torch and matplotlib: Colab's own


def install_command(release: str | None = None) -> list[str]:
    """pip's arguments that install the course on Colab: this version, no dependencies.

    >>> install_command("0.1.0")
    ['install', '--quiet', '--no-deps', 'gather-course==0.1.0', 'babel>=2.10']
    """
    return ["install", "--quiet", "--no-deps", f"gather-course=={release or version('gather-course')}",
            *_NOTEBOOK_DEPENDENCIES]  # fmt: skip


_COMMENT = {
    "en": "# On Google Colab: install the course's package (Colab's torch stays). Elsewhere: nothing.",
    "zh": "# 在 Google Colab 上：安装本课程的包（保留 Colab 自带的 torch）。在别处：什么也不做。",
}  # fmt: skip


def colab_cell(lang: str = "en", release: str | None = None) -> str:
    """The source of the first code cell of every lecture and exercise, in edition ``lang``."""
    args = ", ".join(f'"{a}"' for a in install_command(release))
    return "\n".join(
        [
            _COMMENT[lang],
            "import sys",
            "",
            'if "google.colab" in sys.modules:',
            "    import subprocess",
            "",
            f"    pip = [{args}]",
            '    subprocess.run([sys.executable, "-m", "pip", *pip], check=True)',
        ]
    )
