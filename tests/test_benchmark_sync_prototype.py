"""benchmarks/sync_prototype.py (issue 67, step 3) on the simulator: its barriers lose no write, and its
check counts a read that misses one."""

import numpy as np
from _benchmarks import load_benchmark
from numba import cuda

bench = load_benchmark("sync_prototype")


def test_no_barrier_loses_a_write(capsys):
    assert bench.check() == 0
    assert capsys.readouterr().out.count(": 0 errors") == 3


def test_a_missed_write_is_counted():
    # generation 3 checks generation 2's words, which nobody wrote: every block counts one error
    buf = cuda.to_device(np.full((2, 3), -1, np.int64))
    errors = cuda.to_device(np.zeros(1, np.int64))
    bench.launch_kernel[3, 32](buf, errors, 3)
    assert int(errors.copy_to_host()[0]) == 3
