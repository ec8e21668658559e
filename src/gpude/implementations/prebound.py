"""Kept for code that imports :class:`PreboundLaunch` from here; it lives in :mod:`gpude.prebound`
(below the problems layer, since the functions' evaluators pre-bind their launches too)."""

from ..prebound import PreboundLaunch

__all__ = ["PreboundLaunch"]
