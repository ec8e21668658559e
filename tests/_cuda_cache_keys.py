import json
import sys

import numpy as np
from numba import float64

import gpude  # noqa: F401
from gpude.functions import get_function, gpu
from gpude.implementations import all_gpu
from gpude.implementations.block import build_block_kernel
from gpude.implementations.masw_gpu import build_gpu_masw
from gpude.implementations.resident import build_resident_kernel


class Codegen:
    def magic_tuple(self):
        return ("x86_64-unknown-linux-gnu", "sm_90", "")

fid = sys.argv[1]
prog = get_function(fid, 30).program
block = gpu.make_block_evaluator(prog, 32, np.float64)
kernels = {"population": gpu.make_population_kernel(block, 30, 32, np.float64, gpu.buffer_size(prog))}
for k in all_gpu.build_kernels(np.float64):
    kernels[k.py_func.__name__] = k
for k in build_gpu_masw(np.float64, 8, 32).values():  # MA-SW-Chains' kernels
    kernels["masw." + k.py_func.__name__] = k
kernels["resident"] = build_resident_kernel(block, np.float64, 32, gpu.buffer_size(prog), 30)  # cooperative
kernels["block"] = build_block_kernel(gpu.make_block_evaluator(prog, 32, np.float64, warp=True), np.float64, 64,
                                     gpu.buffer_size(prog), 30)
keys = {}
for name, k in kernels.items():
    assert k._cache.__class__.__name__ == "CUDACache", name
    keys[name] = repr(k._cache._index_key((float64[:],), Codegen())[3])
print(json.dumps(keys))
