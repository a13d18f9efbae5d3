"""What the claim tests of the lectures share: a lecture's cells, what a cell printed, its
prose, and the source articles (the lectures' claim tests)."""

from __future__ import annotations

import nbformat
import pytest

from tests.helpers import ROOT

NOTEBOOKS = ROOT / "notebooks"
SEEDS = ROOT.parent / "shared" / "seeds"  # the source articles, next to a maintainer's checkout
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason="no ../shared/seeds")


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
