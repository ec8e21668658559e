"""Implementations (backends): how an algorithm runs. One module each, one line here each."""

from ..registry import register

register("de", "sequential", "gpude.implementations.sequential:Sequential", "cpu",
         "DE/rand/1/bin on one CPU thread (numba)")
register("de", "master_slave", "gpude.implementations.master_slave:MasterSlave", "cpu",
         "operators on the master thread, fitness on a pool of GIL-free numba worker threads",
         threads="all")
register("de", "naive_gpu", "gpude.implementations.naive_gpu:NaiveGPU", "gpu",
         "operators on the CPU; each generation's trials evaluated on the GPU")
register("de", "all_gpu", "gpude.implementations.all_gpu:AllGPU", "gpu",
         "population on the GPU, one kernel per operator (Qin et al. Fig. 1, Janssen et al. Fig. 4)")
register("de", "ide", "gpude.implementations.ide:IDE", "gpu",
         "Qin et al.'s iDE: fused kernels IE, P, MCER, two streams, occupancy-driven launch")
register("jde", "sequential", "gpude.implementations.jde_sequential:JDESequential", "cpu",
         "jDE (self-adaptive F and CR per individual) on one CPU thread (numba)")
register("jde", "cujde", "gpude.implementations.cujde:CuJDE", "gpu",
         "cujDE's design: block per individual, thread per dimension, parameters in shared memory, "
         "separate selection and parameter-update kernels")
