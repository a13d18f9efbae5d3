"""``python -m gather_course.cli``: the same as the ``gather-course`` command."""

import sys

from . import main

sys.exit(main())
