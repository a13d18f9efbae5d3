"""The copy report (``gather-course similar``): an instructor's tool, outside grading.

It reads submissions, never runs them in this process and changes no score. :mod:`._similar`
finds the same code once names, comments and layout are set aside, answers that match a
published solution, and answers that reach into the course; :mod:`._fingerprints` finds
partial copies by winnowing (copydetect, as MOSS does); :mod:`._crossed` finds answers that
are right for a classmate's variant and wrong for their own. It lives apart from
:mod:`..grading` because copydetect brings matplotlib, which the grader never loads.
"""

from __future__ import annotations

from .._front_door import front_door

# The front door: what other rooms may use, and the module of this room that holds it.
# Other rooms import these names from here (``from ..copies import ...``), never a module
# of this room (tests/test_architecture.py); each module loads when one of its names does.
_EXPORTS = {
    "similar": "_similar",
}
__all__ = sorted(_EXPORTS)
__getattr__ = front_door(__name__, _EXPORTS)
