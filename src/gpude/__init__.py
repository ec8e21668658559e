"""gpude: a reproducible benchmark suite for GPU-based Differential Evolution.

Importing :mod:`gpude` never touches CUDA; GPU code is imported when a GPU
path is first used.
"""

from .core import jitcache  # noqa: F401  (must run before numba is imported)
from .problems.registry import register_family

__version__ = "0.1.0"

# The benchmark functions plug into the problem registry from the layer above it: by import string,
# so that `import gpude` imports neither them nor numba (docs/architecture.md).
register_family("gpude.functions.families:BENCHMARK_FUNCTIONS")
register_family("gpude.functions.families:LARGE_SCALE_FUNCTIONS")


def run_trial(*args, **kwargs):
    """One trial of an algorithm implementation; see :func:`gpude.run.trial.run_trial`."""
    from .run.trial import run_trial as _run_trial

    return _run_trial(*args, **kwargs)


def minimize(*args, **kwargs):
    """Your own objective with any algorithm and implementation; see :func:`gpude.run.optimize.minimize`."""
    from .run.optimize import minimize as _minimize

    return _minimize(*args, **kwargs)
