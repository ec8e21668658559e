"""Exceptions with messages that name the problem and the fix."""

from __future__ import annotations


class GpudeError(Exception):
    """Base class of gpude's own errors."""


class UnknownFunctionError(GpudeError, KeyError):
    """A benchmark function id that does not exist."""

    def __str__(self) -> str:  # KeyError would print the message in quotes
        return str(self.args[0])


class UnsupportedDimensionError(GpudeError, ValueError):
    """A dimension for which no official data exists."""


class InvalidInputError(GpudeError, ValueError):
    """Points of the wrong shape or type, or an invalid option."""


class GPUUnavailableError(GpudeError, RuntimeError):
    """A GPU code path was asked for on a machine without a usable CUDA GPU."""
