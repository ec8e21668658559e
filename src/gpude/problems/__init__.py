"""Problems that are not boxes of real numbers with a formula (Kromer et al.): the linear ordering
problem on LOLIB / N-LOLIB matrices and independent task scheduling on Braun et al.'s ETC matrices.

Each is seen by the algorithms as the benchmark functions are: real vectors in a box, evaluated a
population at a time on the CPU or the GPU, ``evaluate(X) -> errors`` to minimise. What differs is
the decoding (random keys to a permutation, keys to a machine per task) and what a solution reports
(:meth:`report`). Instances come from ``gpude fetch-data lolib|etc`` (:mod:`gpude.instances`).
"""

from .lop import LinearOrdering, get_lop, list_lop
from .scheduling import TaskScheduling, get_etc, list_etc, min_min

__all__ = ["LinearOrdering", "get_lop", "list_lop", "TaskScheduling", "get_etc", "list_etc", "min_min"]
