"""Test-wide set-up: pictures are drawn without a display."""

import matplotlib

matplotlib.use("Agg")
