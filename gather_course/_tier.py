"""The tiers of a check's verdict, in the order a check looks for them.

Kept apart from the question bank: answers graded in the sandbox may name them too.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from ._i18n import N_

__all__ = ["Tier"]


class Tier(str, Enum):
    """What a check found. A check looks in this order and reports the first failure.

    For each test case in turn: the function is not attempted yet, raised an exception,
    changed its inputs, returned the wrong type, shape, dtype, device, or values. Once
    every case is right: it broke the question's constraints, it is not vectorized. Else: passed.
    A ``Tier`` is also a ``str`` (its value, e.g. ``"wrong shape"``).
    """

    NOT_ATTEMPTED = N_("not attempted")
    EXCEPTION = N_("raised an exception")
    MUTATED = N_("changed its inputs")
    WRONG_TYPE = N_("wrong type")
    WRONG_SHAPE = N_("wrong shape")
    WRONG_DTYPE = N_("wrong dtype")
    WRONG_DEVICE = N_("wrong device")
    WRONG_VALUES = N_("wrong values")
    CONSTRAINTS = N_("broke the question's constraints")
    NOT_VECTORIZED = N_("not vectorized")
    PASSED = N_("passed")

    def __str__(self) -> str:
        return self.value

    __format__ = str.__format__


def untouched_template(fn: Any, exc: BaseException) -> bool:
    """Whether ``exc`` is the template's own ``raise NotImplementedError()``: not attempted.

    Only a bare ``NotImplementedError`` (no message) raised by ``fn``'s own code counts.
    torch raises ``NotImplementedError`` with a message for an operation it lacks on a
    device or dtype (an integer matmul on CUDA); a helper of the learner's may raise one
    too: both are errors of an attempted answer, reported with their message.

    >>> def stub(x):
    ...     raise NotImplementedError()
    >>> try:
    ...     stub(1)
    ... except NotImplementedError as err:
    ...     untouched_template(stub, err)
    True
    """
    if type(exc) is not NotImplementedError or str(exc):
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code is getattr(fn, "__code__", None)
