"""nbgrader settings: solutions/ is the source, exercises/ the release (student versions)."""

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.root = "."
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
