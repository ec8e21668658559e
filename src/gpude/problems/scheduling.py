"""Independent task scheduling on Braun et al.'s 512 x 16 ETC matrices (Kromer et al. Table 4).

A candidate is a vector of 512 real keys in [0, m) (m = 16 machines); task t runs on machine
``min(floor(x_t), m - 1)`` (Kromer et al. truncate coordinates in [1, m + 1); the same rule shifted
to 0-based machines). With ETC[t, i] the expected time of task t on machine i and no previous
workload (W_i = 0: the paper states none):

* makespan = max_i sum_{t on i} ETC[t, i] (Kromer et al. eq. 13);
* flowtime, ``flowtime="eq14"`` (default): sum_t ETC[t, machine(t)], the paper's eq. 14 read
  literally; ``"completion"``: the sum of the tasks' completion times when every machine runs its
  tasks shortest first (the usual definition, which eq. 12 states in words);
* fit = lambda makespan + (1 - lambda) flowtime / m, minimised. lambda is not given in the paper;
  the default 0.75 is Xhafa et al.'s for the same fitness in their cellular memetic algorithm for
  grid scheduling, which weighs makespan first (our choice; a parameter).

``evaluate`` returns fit (there is no known optimum; the report gives the makespan of Min-Min, the
classical baseline, beside ours; ``data/etc/instances.csv`` also holds the best makespans published
by Gogos et al.). The matrix layout
(task-major: value k is task k // 16, machine k % 16) and the Min-Min makespans of
``data/etc/instances.csv`` are checked in the tests.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
from numba import cuda, float64, int32  # module level: the CUDA simulator swaps kernel globals

from ..core.errors import InvalidInputError, UnknownFunctionError
from ..core.io import read_csv
from .base import DeviceEvaluator, Problem
from .instances import instance_file, table_dir

N_TASKS, N_MACHINES = 512, 16
FLOWTIME_MODES = ("eq14", "completion")


def read_etc(path, tasks: int = N_TASKS, machines: int = N_MACHINES) -> np.ndarray:
    values = np.array(open(path).read().split(), dtype=np.float64)
    if values.size != tasks * machines:
        raise InvalidInputError(f"{path}: {values.size} values, expected {tasks} x {machines}")
    return values.reshape(tasks, machines)


@cache
def instances() -> pd.DataFrame:
    return read_csv(table_dir("etc") / "instances.csv").set_index("paper_name")


def list_etc() -> list[str]:
    """The 12 classes by the paper's names (ThMhCc ... TlMlCs)."""
    return list(instances().index)


def min_min(etc: np.ndarray) -> tuple[np.ndarray, float]:
    """Min-Min (Braun et al.): repeatedly give the task with the smallest earliest completion time to
    the machine that completes it earliest. Returns (machine per task, makespan)."""
    n, m = etc.shape
    ready = np.zeros(m)
    left = np.ones(n, bool)
    machine = np.full(n, -1)
    for _ in range(n):
        completion = ready[None, :] + etc  # (n, m)
        best_m = completion.argmin(axis=1)
        best_c = completion[np.arange(n), best_m]
        best_c[~left] = np.inf
        t = int(best_c.argmin())
        machine[t], ready[best_m[t]], left[t] = best_m[t], best_c[t], False
    return machine, float(ready.max())


# Both evaluators add in one order, so the CPU and the GPU agree bit for bit (a run is the same
# trajectory on both): a machine's load sums its tasks in task order; eq. 14's flowtime sums the
# loads in machine order, the completion flowtime the tasks' completion times in task order; fit is
# one fused multiply-add.

@cache
def _cpu_kernel(parallel: bool):
    import numba

    from ..core.fma import fma_cpu

    @numba.njit(nogil=True, parallel=parallel)
    def evaluate(etc, X, lam, completion, out, makespans, flowtimes):
        n, m = etc.shape
        for r in numba.prange(X.shape[0]):
            loads = np.zeros(m)
            for t in range(n):
                i = min(int(X[r, t]), m - 1)
                loads[i] += etc[t, i]
            flow = 0.0
            if completion:  # shortest first per machine: task t completes after every shorter task there
                for t in range(n):
                    i = min(int(X[r, t]), m - 1)
                    c = 0.0
                    for u in range(n):
                        if min(int(X[r, u]), m - 1) == i and (etc[u, i] < etc[t, i]
                                                              or (etc[u, i] == etc[t, i] and u <= t)):
                            c += etc[u, i]
                    flow += c
            else:
                for i in range(m):
                    flow += loads[i]
            span = loads.max()
            makespans[r], flowtimes[r] = span, flow
            out[r] = fma_cpu(lam, span, (1.0 - lam) * flow / m)
    return evaluate


@cache
def _rows_kernel():
    """The one-thread kernel as ``rows(X, out, etc, lam, completion)``, callable from numba code
    (``master_slave``'s pipeline evaluates chunks of rows with it)."""
    import numba

    kernel = _cpu_kernel(False)

    @numba.njit(nogil=True)
    def rows(X, out, etc, lam, completion):
        n = X.shape[0]
        kernel(etc, X, lam, completion, out, np.empty(n), np.empty(n))
    return rows


_GPU: dict = {}


def _gpu_kernel(n: int, m: int, completion: bool):
    """A block per candidate: a thread per task decodes its machine, a thread per machine sums its
    load, thread 0 closes (the order of every sum as on the CPU)."""
    from ..core.fma import fma_for

    key = (n, m, completion)
    if key in _GPU:
        return _GPU[key]
    fma = fma_for("cuda")
    N_C = n if completion else 1

    @cuda.jit(cache=True)
    def evaluate(etc, X, row0, gate, lam, out, makespans, flowtimes, parts):
        if gate[0] == 0:
            return
        row, t = row0 + cuda.blockIdx.x, cuda.threadIdx.x
        machine = cuda.shared.array(n, int32)
        loads = cuda.shared.array(m, float64)
        done = cuda.shared.array(N_C, float64)
        if t < n:
            machine[t] = min(int(X[row, t]), m - 1)
        cuda.syncthreads()
        if t < m:
            load = 0.0
            for u in range(n):
                if machine[u] == t:
                    load += etc[u, t]
            loads[t] = load
        if completion and t < n:
            i = machine[t]
            e = etc[t, i]
            c = 0.0
            for u in range(n):
                if machine[u] == i and (etc[u, i] < e or (etc[u, i] == e and u <= t)):
                    c += etc[u, i]
            done[t] = c
        cuda.syncthreads()
        if t == 0:
            span, flow = 0.0, 0.0
            for i in range(m):
                span = max(span, loads[i])
                if not completion:
                    flow += loads[i]
            if completion:
                for u in range(n):
                    flow += done[u]
            out[row] = fma(lam, span, (1.0 - lam) * flow / m)
            if parts:
                makespans[row], flowtimes[row] = span, flow
    _GPU[key] = evaluate
    return evaluate


MAX_GPU_TASKS = 1024  # a thread per task, one block per candidate


class ETCEvaluator(DeviceEvaluator):
    """Rows of a device array on the GPU (the evaluator interface of :mod:`gpude.problems.base`);
    ``parts(X, out, makespans, flowtimes, row0, n)`` also writes the two objectives."""

    def __init__(self, problem: TaskScheduling):
        if problem.dim > MAX_GPU_TASKS:
            raise InvalidInputError(f"{problem.fid}: {problem.dim} tasks exceed the {MAX_GPU_TASKS} threads of a "
                                    "block (one per task); evaluate it on the CPU")
        self.kernel = _gpu_kernel(problem.dim, problem.machines, problem.flowtime == "completion")
        self.etc = cuda.to_device(problem.etc)
        self.lam = problem.lam
        self.threads = 32 * -(-max(problem.dim, problem.machines) // 32)
        self.always = cuda.to_device(np.ones(1, np.int32))
        self.unused = cuda.device_array(1, np.float64)

    @property
    def device_bytes(self) -> int:
        return self.etc.nbytes

    def launch(self, X, out, row0: int, n: int, stream=0, gate=None):
        gate = self.always if gate is None else gate
        self.kernel[n, self.threads, stream](self.etc, X, row0, gate, self.lam, out, self.unused,
                                             self.unused, False)

    def prebound(self, X, out, row0: int, n: int, stream, gate=None):
        """``launch`` with its arguments marshalled once (see :class:`gpude.core.prebound.PreboundLaunch`)."""
        from ..core.prebound import PreboundLaunch

        gate = self.always if gate is None else gate
        return PreboundLaunch(self.kernel, (self.etc, X, row0, gate, self.lam, out, self.unused, self.unused,
                                            False), n, self.threads, stream).launch

    def parts(self, X, out, makespans, flowtimes, row0: int, n: int, stream=0):
        self.kernel[n, self.threads, stream](self.etc, X, row0, self.always, self.lam, out, makespans,
                                             flowtimes, True)


class TaskScheduling(Problem):
    """A Braun et al. ETC instance as a problem on keys in [0, m)^n (see the module docstring).

    ``fid`` is the paper's name (``ThMhCc``); the error the algorithms minimise is fit itself (no
    optimum is known).
    """

    suite = "etc"

    def __init__(self, name: str, lam: float = 0.75, flowtime: str = "eq14"):
        table = instances()
        if name not in table.index:
            raise UnknownFunctionError(f"unknown ETC instance {name!r}; known: {', '.join(table.index)}")
        self._configure(lam, flowtime)
        row = table.loc[name]
        self.fid = self.name = name
        self.file = row["file"]
        self.etc = read_etc(instance_file("etc", self.file))
        self.dim, self.machines = self.etc.shape
        self.lower, self.upper = 0.0, float(self.machines)
        self.min_min_makespan = float(row["minmin_makespan_computed"])

    @classmethod
    def from_matrix(cls, etc, name: str = "etc", lam: float = 0.75, flowtime: str = "eq14") -> TaskScheduling:
        """Scheduling on your own tasks x machines ETC matrix (positive times)."""
        etc = np.asarray(etc, dtype=np.float64)
        if etc.ndim != 2 or min(etc.shape) < 1 or not np.isfinite(etc).all() or (etc <= 0).any():
            raise InvalidInputError(f"an ETC matrix must be a finite, positive tasks x machines matrix, got "
                                    f"shape {etc.shape}")
        self = cls.__new__(cls)
        self._configure(lam, flowtime)
        self.etc = np.ascontiguousarray(etc)
        self.fid = self.name = str(name)
        self.file = None
        self.dim, self.machines = etc.shape
        self.lower, self.upper = 0.0, float(self.machines)
        self.min_min_makespan = min_min(self.etc)[1]
        return self

    def _configure(self, lam, flowtime):
        if not 0.0 <= lam <= 1.0:
            raise InvalidInputError(f"lambda must lie in [0, 1], got {lam!r}")
        if flowtime not in FLOWTIME_MODES:
            raise InvalidInputError(f"flowtime must be one of {', '.join(FLOWTIME_MODES)}, got {flowtime!r}")
        self.lam, self.flowtime = float(lam), flowtime

    def __repr__(self) -> str:
        return f"TaskScheduling({self.name!r}, lambda={self.lam}, flowtime={self.flowtime!r})"

    def decode(self, x) -> np.ndarray:
        """The machine of every task: min(floor(key), m - 1)."""
        return np.minimum(np.floor(np.asarray(x)).astype(np.int64), self.machines - 1)

    def _check_keys(self, X):
        if (X < self.lower).any():
            raise InvalidInputError(f"{self.name}: keys must be >= 0 (machine = floor(key))")

    def cpu_evaluator(self, dtype, parallel: bool = False):
        kernel, etc, lam = _cpu_kernel(bool(parallel)), self.etc, self.lam
        completion = self.flowtime == "completion"

        def evaluate(X, out):
            spans, flows = np.empty(X.shape[0]), np.empty(X.shape[0])
            kernel(etc, X, lam, completion, out, spans, flows)
        return evaluate

    def cpu_rows_kernel(self, dtype):
        """``(rows, args)``: ``rows(X, out, *args)`` a numba function (one thread) of every row."""
        return _rows_kernel(), (self.etc, self.lam, self.flowtime == "completion")

    def gpu_evaluator(self, dtype, max_rows: int | None = None, **options) -> ETCEvaluator:
        if options:
            raise InvalidInputError(f"the ETC evaluator takes no options, got {', '.join(sorted(options))}")
        return ETCEvaluator(self)

    def evaluate(self, X, device: str = "cpu", dtype="float64", threads: int = 1):
        X_, _ = self._rows(X)
        self._check_keys(X_[np.isfinite(X_).all(axis=1)])
        return super().evaluate(X, device, dtype, threads)

    def parts(self, X, device: str = "cpu") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fit, makespan, flowtime) of every row of X."""
        X, _ = self._rows(X)
        X = np.ascontiguousarray(X, dtype=np.float64)
        if not np.isfinite(X).all():
            raise InvalidInputError(f"{self.name}: keys must be finite")
        self._check_keys(X)
        out, spans, flows = (np.empty(X.shape[0]) for _ in range(3))
        if device == "cpu":
            _cpu_kernel(False)(self.etc, X, self.lam, self.flowtime == "completion", out, spans, flows)
            return out, spans, flows
        if device != "gpu":
            raise InvalidInputError(f"device {device!r} is not supported; use 'cpu' or 'gpu'")
        from ..core.gpu_runtime import require_gpu

        require_gpu()
        d = [cuda.device_array(X.shape[0]) for _ in range(3)]
        self.gpu_evaluator(np.float64).parts(cuda.to_device(X), *d, 0, X.shape[0])
        return tuple(a.copy_to_host() for a in d)

    def summary(self, x) -> dict:
        fit, span, flow = (float(v[0]) for v in self.parts(x))
        return {"fit": fit, "makespan": span, "flowtime": flow}

    def report(self, x) -> dict:
        return {"instance": self.name, **self.summary(x), "lambda": self.lam,
                "min_min_makespan": self.min_min_makespan, "machines": self.decode(x)}


@cache
def get_etc(name: str, lam: float = 0.75, flowtime: str = "eq14") -> TaskScheduling:
    """The instance (read once per process per lambda and flowtime)."""
    return TaskScheduling(name, lam=lam, flowtime=flowtime)
