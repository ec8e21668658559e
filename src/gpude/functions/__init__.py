"""Benchmark functions F01..F10 (Janssen, Pullan & Liew), Q01..Q04 (Qin et al.), N00..N19
(Nashed et al., PPSN 2012: f0..f19) and the CEC 2017 suite (CEC17_F01, CEC17_F03..CEC17_F30).

>>> from gpude.functions import get_function
>>> f = get_function("F05", dim=30)
>>> f.evaluate(f.optimum[None, :])
array([0.])
"""

from .function import BenchmarkFunction, get_function, list_functions
from .suites import DIMS, FUNCTIONS, SUITES

__all__ = ["BenchmarkFunction", "get_function", "list_functions", "DIMS", "FUNCTIONS", "SUITES"]
