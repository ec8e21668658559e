"""benchmarks/rotation_prototype.py (issue 67's prototype) on the simulator: de/block's matrix-vector
rotation, the register-tiled product and the product a pass of individuals at a time give numpy's sums of z^2
(float64) to float32 rounding, with partial tiles, a padded second K-chunk and a partial last pass."""

import numpy as np
from _benchmarks import load_benchmark

bench = load_benchmark("rotation_prototype")


def test_both_kernels_agree_with_numpy(capsys):
    assert bench.check() == 0
    assert capsys.readouterr().out.count(": ok") == 6


def test_the_reference_sees_a_wrong_rotation():
    # the check could fail: the transposed matrix gives other sums
    pop, shift, rot_t = bench.inputs(1, 4, 10)
    right = bench.expected(pop, shift, rot_t, 1)
    wrong = bench.expected(pop, shift, np.ascontiguousarray(rot_t.T), 1)
    assert not np.allclose(right, wrong, rtol=1e-4)
