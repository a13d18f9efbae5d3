"""Test-wide set-up: pictures are drawn without a display, and the learner's data folder
(``XDG_DATA_HOME``, where ``gather-course start`` remembers its working copy) is a temporary
one, so no test run writes into the data folder of whoever runs it."""

import matplotlib
import pytest

matplotlib.use("Agg")


@pytest.fixture(scope="session", autouse=True)
def _own_data_folder(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
        yield
