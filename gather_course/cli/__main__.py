"""``python -m gather_course.cli``: the same as the ``gather-course`` command."""

import sys

from . import main

if __name__ == "__main__":  # (a spawned process, such as a Dask worker, imports it too)
    sys.exit(main())
