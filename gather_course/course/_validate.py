"""Validate in the learner's JupyterLab: a summary first, every verdict whole, in her language.

nbgrader's Validate button posts to ``/assignments/validate``, whose handler runs nbgrader's
``Validator`` and shows each failing test cell's output in a dialog. ``gather-course start``
replaces that server extension with this one (``_learner_config/jupyter_server_config.json``),
which runs the same ``Validator`` with three changes:

- the first failing entry opens with a summary: how many questions pass, and the points;
- each verdict's lines are wrapped, so the dialog (a ``<pre>`` that does not wrap) cuts none;
- the notebook runs with ``JPY_SESSION_NAME`` set to its path, as JupyterLab's own kernels
  are, so a notebook of the Chinese edition validates in Chinese.
"""

from __future__ import annotations

import os
from typing import Any

from .._i18n import _, about_notebook, kernels_run
from .._text import wrap

WIDTH = 88  # columns a line may take; the browser test fails if the dialog scrolls sideways


def _wrap(text: str) -> str:
    """Every line of ``text`` at most WIDTH columns (a Chinese character takes two), continued
    lines indented two more than the first.

    >>> print(_wrap("  " + "word " * 20))
      word word word word word word word word word word word word word word word word word
        word word word
    """
    out = []
    for line in text.splitlines():
        indent = line[: len(line) - len(line.lstrip())]
        pieces = wrap(line.strip(), WIDTH, indent + "  ") or [""]
        out.extend([indent + pieces[0].lstrip(), *pieces[1:]])
    return "\n".join(out)


def summary(grades: list[tuple[float, float]]) -> str:
    """The line above the failing questions: ``2 of 3 questions pass (5 of 8 points).``

    >>> summary([(2.0, 2.0), (0.0, 3.0), (3.0, 3.0)])
    '2 of 3 questions pass (5 of 8 points).'
    """
    passed = sum(score >= most for score, most in grades)
    score, most = sum(s for s, _m in grades), sum(m for _s, m in grades)
    return _("{passed} of {total} questions pass ({score:g} of {most:g} points).").format(
        passed=passed, total=len(grades), score=score, most=most
    )


def _validator_class() -> type:
    from nbconvert.filters import ansi2html
    from nbgrader import utils
    from nbgrader.validator import Validator

    class SummaryValidator(Validator):
        """nbgrader's Validator, with a summary and whole verdicts (see the module)."""

        grades: list[tuple[float, float]]

        def _get_passed_cells(self, nb: Any) -> list:
            self.grades = []
            for cell in nb.cells:
                if utils.is_grade(cell) and cell.cell_type == "code":
                    score, most = utils.determine_grade(cell, self.log)
                    if score is not None:
                        self.grades.append((float(score), float(most)))
            return super()._get_passed_cells(nb)

        def validate(self, filename: str) -> dict:
            path = os.path.abspath(filename)
            self.grades = []
            with kernels_run(path):  # the kernel speaks the notebook's language
                results = super().validate(filename)
            failed = results.get("failed")
            if failed:
                with about_notebook(path):
                    head = summary(self.grades) if self.grades else ""
                for entry in failed:
                    entry["raw_error"] = _wrap(entry["raw_error"])
                    entry["error"] = ansi2html(entry["raw_error"])
                if head:
                    failed[0]["raw_error"] = f"{head}\n\n{failed[0]['raw_error']}"
                    failed[0]["error"] = f"<b>{head}</b>\n\n{failed[0]['error']}"
            return results

    return SummaryValidator


def _handler_class() -> type:
    from nbgrader.server_extensions.validate_assignment import handlers

    validator = _validator_class()

    class Handler(handlers.ValidateAssignmentHandler):
        def validate_notebook(self, path: str) -> dict:
            original = handlers.Validator
            handlers.Validator = validator  # the one name the handler looks up when it runs
            try:
                return super().validate_notebook(path)
            finally:
                handlers.Validator = original

    return Handler


def _load_jupyter_server_extension(server_app: Any) -> None:
    """Serve nbgrader's Validate endpoints, with this module's validator."""
    from jupyter_server.utils import url_path_join
    from nbgrader.server_extensions.validate_assignment import handlers

    web = server_app.web_app
    web.settings["root_dir"] = server_app.root_dir
    base = web.settings["base_url"]
    web.add_handlers(
        ".*$",
        [
            (url_path_join(base, "/assignments/validate"), _handler_class()),
            (url_path_join(base, "/nbgrader_version"), handlers.NbGraderVersionHandler),
        ],
    )


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "gather_course.course._validate"}]


load_jupyter_server_extension = _load_jupyter_server_extension  # the name jupyter_server calls
