"""nbgrader settings: solutions/ is the source, exercises/ the release (student versions).

Run nbgrader (or ``gather-course release`` / ``grade``) from this folder, the course root.
"""

from nbgrader.converters import GenerateAssignment

c = get_config()  # noqa: F821 (provided by nbgrader)

# The course root is the folder nbgrader runs in (gather-course's commands pass it).
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"

# Every student notebook starts with how to work it, check it and submit it.
c.IncludeHeaderFooter.header = "solutions/header.ipynb"

# Run All in a student notebook shows a verdict under every question (answer and test cells
# are tagged raises-exception, so JupyterLab and nbclient go on past a failing one).
c.GenerateAssignment.preprocessors = [
    *GenerateAssignment.class_traits()["preprocessors"].default(),
    "gather_course.grading.nbgrader_plugins.RunAllShowsEveryVerdict",
]

# A learner who deletes a test cell gets it back (and its points are graded as usual).
c.OverwriteCells.add_missing_cells = True

# A cell that runs longer than this is interrupted and its question scores 0.
c.Execute.timeout = 60

# Feedback shows neither the hidden tests nor the traceback lines that would quote them.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "gather_course.grading.nbgrader_plugins.HideHiddenTestTracebacks",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]

# The exchange (docs/jupyterhub.md): its folders closed so that each student reaches only their
# own work; collecting refuses a submission in another student's name, follows no link, and
# keeps a receipt of when the exchange received each one, the time grading uses (a student
# writes timestamp.txt and the folder's name, and can set both). The students' own config names
# gather_course.grading.exchange.Submit.
c.ExchangeFactory.release_assignment = "gather_course.grading.exchange.ReleaseAssignment"
c.ExchangeFactory.collect = "gather_course.grading.exchange.Collect"
c.ExchangeFactory.release_feedback = "gather_course.grading.exchange.ReleaseFeedback"
