"""Course tooling: the course folder, releases, a learner's working copy, the twin
editions and notebook execution. It runs no learner code to judge it (that is
:mod:`gather_course.grading`'s work) and the learner's toolkit never imports it.
"""
