"""What the claim tests of the lectures share: a lecture's cells, what a cell printed, its
prose, and the source articles (the lectures' claim tests)."""

from __future__ import annotations

import nbformat
import pytest
import torch

from tests.helpers import ROOT

NOTEBOOKS = ROOT / "notebooks"
SEEDS = ROOT.parent / "shared" / "seeds"  # the source articles, next to a maintainer's checkout
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason="no ../shared/seeds")

# The installed torch's release, (major, minor). Lecture 06: take_along_dim with a dim wraps
# out-of-range indices from torch 2.10 on, and use_deterministic_algorithms imports the
# compiler from 2.10 on; 2.8 and 2.9 do neither (seen with 2.8.0, 2.9.1, 2.10.0 and 2.13.0).
TORCH = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
TAKE_ALONG_DIM_WRAPS = TORCH >= (2, 10)


def cells(name: str) -> list:
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4).cells


def cell(name: str, cell_id: str):
    (found,) = [c for c in cells(name) if c.get("id") == cell_id]
    return found


def prose(name: str) -> str:
    return "\n".join(c.source for c in cells(name) if c.cell_type == "markdown")


def flat(text: str) -> str:
    return " ".join(text.split())


def printed(c) -> str:
    """What a code cell printed or showed (streams and plain-text results)."""
    parts = []
    for out in c.outputs:
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type == "execute_result":
            parts.append(out.data.get("text/plain", ""))
    return "".join(parts)


def article(number: str) -> str:
    (path,) = SEEDS.glob(f"{number}_*.txt")
    return path.read_text(encoding="utf-8")
