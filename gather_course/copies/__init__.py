"""The copy report (``gather-course similar``): an instructor's tool, outside grading.

It reads submissions, never runs them in this process and changes no score. :mod:`._similar`
finds the same code once names, comments and layout are set aside, answers that match a
published solution, and answers that reach into the course; :mod:`._fingerprints` finds
partial copies by winnowing (copydetect, as MOSS does); :mod:`._crossed` finds answers that
are right for a classmate's variant and wrong for their own. It lives apart from
:mod:`..grading` because copydetect brings matplotlib, which the grader never loads.
"""
