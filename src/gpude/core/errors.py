"""Exceptions with messages that name the problem and the fix."""

from __future__ import annotations

import argparse


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


def require_positive_int(name: str, value, types: tuple = (int,), hint: str = "") -> None:
    """Raise :class:`InvalidInputError` unless ``value`` is an integer >= 1 of ``types`` (never a bool)."""
    if isinstance(value, bool) or not isinstance(value, types) or value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value!r}{hint}")


class GPUOutOfMemoryError(GpudeError, MemoryError):
    """The GPU had not enough memory for a run's buffers (the message names the sizes)."""


def is_out_of_memory(exc: BaseException) -> bool:
    """Whether a CUDA error (driver or runtime, as numba raises it) is an out-of-memory error."""
    text = f"{type(exc).__name__} {exc}".lower()
    return "out_of_memory" in text or "out of memory" in text or getattr(exc, "code", None) == 2


class OneLineArgumentParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr, exit status 2 (the usage is a
    ``--help`` away): the command line interfaces' parser (gpude.cli, ``gpude fetch-data``)."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists the options)\n")


def one_line(exc: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(exc).split())


def say_error(command: str, exc: Exception) -> int:
    """What a command line says of an error that ended ``command`` (e.g. ``run``): one line on stderr,
    naming the problem (and, for a bug, that it is one), and exit status 2. With GPUDE_DEBUG set, a
    bug's traceback instead (it is raised again)."""
    import os
    import sys

    if isinstance(exc, (GpudeError, RuntimeError)):  # CECDataError is a RuntimeError
        print(f"gpude {command}: error: {one_line(exc)}", file=sys.stderr)
    elif isinstance(exc, OSError):  # a file named on the command line that cannot be read or written
        where = f": {exc.filename}" if exc.filename else ""
        print(f"gpude {command}: error: {exc.strerror or exc}{where}", file=sys.stderr)
    else:  # no traceback reaches a user; tests/test_cli_battery.py finds these
        if os.environ.get("GPUDE_DEBUG"):
            raise exc
        print(f"gpude {command}: internal error: {type(exc).__name__}: {one_line(exc)} (a bug in gpude: "
              "please report it; GPUDE_DEBUG=1 shows the traceback)", file=sys.stderr)
    return 2
