"""Which device the course runs on."""

from __future__ import annotations

import os

import torch

from ._errors import GatherCourseError
from ._i18n import _

__all__ = ["default_device"]

ENV_VAR = "GATHER_COURSE_DEVICE"


def default_device() -> torch.device:
    """CUDA when available, else CPU; ``GATHER_COURSE_DEVICE=cpu`` (or ``cuda:1``...) overrides.

    >>> import os; os.environ["GATHER_COURSE_DEVICE"] = "cpu"
    >>> default_device()
    device(type='cpu')
    """
    wanted = os.environ.get(ENV_VAR, "").strip()
    if not wanted:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return parse_device(wanted, ENV_VAR, _("Unset it or use {var}=cpu.").format(var=ENV_VAR))


def parse_device(wanted: str, source: str, fix: str = "") -> torch.device:
    """``wanted`` as a torch device that exists here; ``source`` and ``fix`` word the error."""
    try:
        device = torch.device(wanted)
    except RuntimeError:
        raise GatherCourseError(
            _("{source} must name a torch device such as cpu or cuda, got {got}.").format(
                source=source, got=repr(wanted)
            )
        ) from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise GatherCourseError(
            _("{source}={got} asks for CUDA, but torch {version} sees no CUDA device here.").format(
                source=source, got=repr(wanted), version=torch.__version__
            )
            + (f" {fix}" if fix else "")
        )
    return device
