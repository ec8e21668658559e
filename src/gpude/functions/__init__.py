"""Benchmark functions F01..F10 (Janssen, Pullan & Liew) and Q01..Q04 (Qin et al.).

>>> from gpude.functions import get_function
>>> f = get_function("F05", dim=30)
>>> f.evaluate(f.optimum[None, :])
array([0.])
"""

from .function import BenchmarkFunction, get_function, list_functions
from .suites import DIMS, FUNCTIONS

__all__ = ["BenchmarkFunction", "get_function", "list_functions", "DIMS", "FUNCTIONS"]
