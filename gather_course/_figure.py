"""A matplotlib Figure that shows itself where a learner asks for it.

The drawing helpers make their figures without pyplot (nothing global, nothing drawn twice)
and return them. A notebook shows a returned figure as a picture only where IPython has a
PNG formatter for figures: after ``%matplotlib inline`` or a pyplot import, as in the
lectures, but not in an exercise notebook, whose cells import neither (there a cell ending
in ``.draw()`` printed ``<Figure size 500x250 with 2 Axes>``). :class:`ShownFigure` brings
its own ``_repr_png_``, so JupyterLab, Colab and nbclient show it in any notebook. Where a
formatter for figures is registered, IPython uses that one (it looks types up before
``_repr_png_``), so a lecture's picture is drawn as before, and never twice.

>>> ShownFigure(figsize=(1, 1))._repr_png_()[:4]
b'\\x89PNG'
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure


class ShownFigure(Figure):
    """A :class:`matplotlib.figure.Figure` that a notebook displays as a PNG picture.

    >>> ShownFigure(figsize=(2, 1))
    <Figure size 200x100 with 0 Axes>
    """

    def __repr__(self) -> str:  # a Figure to the learner: the class is the course's detail
        return super().__repr__().replace(type(self).__name__, "Figure", 1)

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()
