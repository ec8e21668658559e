"""Implementations (backends): how an algorithm runs. One module each, one line here each.

The lines are data: :mod:`gpude.implementations.registry` registers them when it is first asked (this package
imports nothing of the registry, so the two never import each other).
"""


def _entry(algorithm: str, implementation: str, target: str, device: str, description: str,
           threads: str = "one") -> tuple:
    """The arguments of :func:`gpude.implementations.registry.register` for one built-in implementation."""
    return (algorithm, implementation, target, device, description, threads)


#: the built-in (algorithm, implementation) pairs, in the order ``gpude list`` shows them
BUILTIN = (
    _entry("de", "sequential", "gpude.implementations.sequential:Sequential", "cpu",
           "DE/rand/1/bin on one CPU thread (numba)"),
    _entry("de", "high_level", "gpude.implementations.high_level:HighLevel", "cpu",
           "DE/rand/1/bin in plain Python and numpy, no JIT (the readable specification; Kromer et al.'s "
           "high-level CPU column): de/sequential's runs, bit for bit, slower"),
    _entry("de", "master_slave", "gpude.implementations.master_slave:MasterSlave", "cpu",
           "operators on the master thread, fitness on a pool of GIL-free numba worker threads",
           threads="all"),
    _entry("de", "naive_gpu", "gpude.implementations.naive_gpu:NaiveGPU", "gpu",
           "operators on the CPU; each generation's trials evaluated on the GPU"),
    _entry("de", "all_gpu", "gpude.implementations.all_gpu:AllGPU", "gpu",
           "population on the GPU, one kernel per operator (Qin et al. Fig. 1, Janssen et al. Fig. 4)"),
    _entry("de", "ide", "gpude.implementations.ide:IDE", "gpu",
           "Qin et al.'s iDE: fused kernels IE, P, MCER, two streams, occupancy-driven launch"),
    _entry("de", "cudade", "gpude.implementations.cudade:CudaDE", "gpu",
           "cudaDE (Veronese & Krohling 2010): host-drawn index matrix copied every generation, kernels "
           "I+E, M+C, E+R on a fixed grid of 240 blocks x 64 threads"),
    _entry("de", "fpde", "gpude.implementations.fpde:FPDE", "gpu",
           "FPDE (Gonzalez & Barriga 2011): one kernel per operator, ceil(N/16) blocks x 16 threads "
           "(N blocks x 16 threads for evaluation), random numbers on the device"),
    _entry("de", "two_kernel", "gpude.implementations.two_kernel:TwoKernelDE", "gpu",
           "Nashed et al.'s GPU DE: two kernels per generation (mutation + crossover, then "
           "evaluation + selection); every mutation x crossover variant"),
    _entry("de", "many_threaded", "gpude.implementations.many_threaded:ManyThreaded", "gpu",
           "Kromer et al.'s many-threaded DE: a block per individual, a thread per parameter, the "
           "offspring population merged with the parents; the problem's own evaluation kernel (runs LOP, "
           "scheduling and large-scale problems too)"),
    _entry("de", "resident", "gpude.implementations.resident:ResidentDE", "gpu",
           "the whole run resident on the GPU: one cooperative kernel launch, a grid-wide barrier between "
           "generations, the stop test and the trace on the device"),
    _entry("de", "block", "gpude.implementations.block:BlockDE", "gpu",
           "each trial's whole run in one thread block: a block per trial of the batch, a block barrier "
           "between generations, the stop test and the trace on the device (for batches of many trials)"),
    _entry("jde", "sequential", "gpude.implementations.jde_sequential:JDESequential", "cpu",
           "jDE (self-adaptive F and CR per individual) on one CPU thread (numba)"),
    _entry("jde", "cujde", "gpude.implementations.cujde:CuJDE", "gpu",
           "cujDE's design: block per individual, thread per dimension, parameters in shared memory, "
           "separate selection and parameter-update kernels"),
    _entry("pso", "sequential", "gpude.implementations.pso_sequential:PSOSequential", "cpu",
           "synchronous inertia-weight PSO (ring or global best) on one CPU thread (numba)"),
    _entry("pso", "gpu", "gpude.implementations.pso_gpu:PSOGPU", "gpu",
           "libCudaOptimize's PSO (Nashed et al.): thread per coordinate, kernels for neighbourhood, "
           "move and evaluation + pbest update"),
    _entry("ss", "sequential", "gpude.implementations.ss_sequential:SSSequential", "cpu",
           "scatter search with Solis-Wets improvement on one CPU thread (numba)"),
    _entry("ss", "gpu", "gpude.implementations.ss_gpu:SSGPU", "gpu",
           "libCudaOptimize's scatter search (Nashed et al.): BLX combination and Solis-Wets steps of "
           "every child on the GPU, one host sync per iteration"),
    _entry("masw", "sequential", "gpude.implementations.masw_sequential:MASWSequential", "cpu",
           "MA-SW-Chains (Realea's rules) on one CPU thread (numba); offspring=1 is Realea's SSGA"),
    _entry("masw", "gpu", "gpude.implementations.masw_gpu:MASWGPU", "gpu",
           "Lastra et al.'s GPU MA-SW-Chains: 20 children per GA step, every loop over D on the GPU, "
           "evaluators that stream over D, Solis-Wets decisions on the device"),
    _entry("jso", "sequential", "gpude.implementations.jso_sequential:JSOSequential", "cpu",
           "jSO (Brest et al. 2017: L-SHADE with weighted F, CR/F schedules, averaged memory) on one CPU "
           "thread (numba)"),
    _entry("lshade", "sequential", "gpude.implementations.jso_sequential:LSHADESequential", "cpu",
           "L-SHADE (Tanabe & Fukunaga 2014: SHADE with linear population size reduction) on one CPU "
           "thread (numba)"),
    _entry("jso", "block", "gpude.implementations.jso_block:JSOBlock", "gpu",
           "jSO, each trial's whole run in one thread block (a warp a child; ranking, draws, selection and "
           "population size reduction spread over the block): batches of trials, e.g. the CEC protocol's 51"),
    _entry("lshade", "block", "gpude.implementations.jso_block:LSHADEBlock", "gpu",
           "L-SHADE, each trial's whole run in one thread block (jso/block at L-SHADE's settings)"),
)
