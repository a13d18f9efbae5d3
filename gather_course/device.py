"""Which device the course runs on."""

from __future__ import annotations

import os

import torch

from ._errors import GatherCourseError

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
    return _parse_device(wanted, ENV_VAR, f"Unset it or use {ENV_VAR}=cpu.")


def _parse_device(wanted: str, source: str, fix: str = "") -> torch.device:
    """``wanted`` as a torch device that exists here; ``source`` and ``fix`` word the error."""
    try:
        device = torch.device(wanted)
    except RuntimeError:
        raise GatherCourseError(
            f"{source} must name a torch device such as cpu or cuda, got {wanted!r}."
        ) from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise GatherCourseError(
            f"{source}={wanted!r} asks for CUDA, but torch {torch.__version__} sees no CUDA "
            f"device here." + (f" {fix}" if fix else "")
        )
    return device
