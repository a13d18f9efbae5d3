"""The test suite (a package, so that tests import tests/helpers.py and tests/answers.py by name)."""
