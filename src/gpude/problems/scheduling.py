"""Independent task scheduling on Braun et al.'s 512 x 16 ETC matrices (Kromer et al. Table 4).

A candidate is a vector of 512 real keys in [0, m) (m = 16 machines); task t runs on machine
``min(floor(x_t), m - 1)`` (Kromer et al. truncate coordinates in [1, m + 1); the same rule shifted
to 0-based machines). With ETC[t, i] the expected time of task t on machine i and no previous
workload (W_i = 0, as studies.md advises):

* makespan = max_i sum_{t on i} ETC[t, i] (Kromer et al. eq. 13);
* flowtime, ``flowtime="eq14"`` (default): sum_t ETC[t, machine(t)], the paper's eq. 14 read
  literally; ``"completion"``: the sum of the tasks' completion times when every machine runs its
  tasks shortest first (the usual definition, which eq. 12 states in words);
* fit = lambda makespan + (1 - lambda) flowtime / m, minimised. lambda is not given in the paper;
  the default 0.75 is Xhafa et al.'s for the same fitness in their cellular memetic algorithm for
  grid scheduling, which weighs makespan first (our choice; a parameter).

``evaluate`` returns fit (there is no known optimum; the report gives Min-Min, the classical
baseline, and the best makespans published by Gogos et al. beside it). The matrix layout
(task-major: value k is task k // 16, machine k % 16) and the Min-Min makespans of
``data/etc/instances.csv`` are checked in the tests.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd
from numba import cuda, float64  # module level: the CUDA simulator swaps kernel globals

from ..errors import InvalidInputError
from ..instances import data_dir, instance_file

N_TASKS, N_MACHINES = 512, 16
FLOWTIME_MODES = ("eq14", "completion")


def read_etc(path, tasks: int = N_TASKS, machines: int = N_MACHINES) -> np.ndarray:
    values = np.array(open(path).read().split(), dtype=np.float64)
    if values.size != tasks * machines:
        raise InvalidInputError(f"{path}: {values.size} values, expected {tasks} x {machines}")
    return values.reshape(tasks, machines)


@lru_cache(maxsize=None)
def instances() -> pd.DataFrame:
    return pd.read_csv(data_dir("etc") / "instances.csv").set_index("paper_name")


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


def _cpu_kernel():
    import numba

    @numba.njit(nogil=True)
    def evaluate(etc, X, lam, completion, out, makespans, flowtimes):
        n, m = etc.shape
        loads = np.empty(m)
        for r in range(X.shape[0]):
            loads[:] = 0.0
            flow = 0.0
            for t in range(n):
                i = min(int(X[r, t]), m - 1)
                loads[i] += etc[t, i]
                if not completion:
                    flow += etc[t, i]
            if completion:  # shortest first per machine: task t completes after every shorter task there
                for t in range(n):
                    i = min(int(X[r, t]), m - 1)
                    c = 0.0
                    for u in range(n):
                        if min(int(X[r, u]), m - 1) == i and (etc[u, i] < etc[t, i] or (etc[u, i] == etc[t, i] and u <= t)):
                            c += etc[u, i]
                    flow += c
            span = loads.max()
            makespans[r], flowtimes[r] = span, flow
            out[r] = lam * span + (1.0 - lam) * flow / m
    return evaluate


_CPU = None
_GPU: dict = {}


def _gpu_kernel(n: int, m: int, completion: bool):
    key = (n, m, completion)
    if key in _GPU:
        return _GPU[key]

    @cuda.jit
    def evaluate(etc, X, lam, out, makespans, flowtimes):
        row, t = cuda.blockIdx.x, cuda.threadIdx.x
        loads = cuda.shared.array(m, float64)
        flow = cuda.shared.array(1, float64)
        if t < m:
            loads[t] = 0.0
        if t == 0:
            flow[0] = 0.0
        cuda.syncthreads()
        if t < n:
            i = min(int(X[row, t]), m - 1)
            e = etc[t, i]
            cuda.atomic.add(loads, i, e)
            if completion:
                c = 0.0
                for u in range(n):
                    if min(int(X[row, u]), m - 1) == i and (etc[u, i] < e or (etc[u, i] == e and u <= t)):
                        c += etc[u, i]
                cuda.atomic.add(flow, 0, c)
            else:
                cuda.atomic.add(flow, 0, e)
        cuda.syncthreads()
        if t == 0:
            span = 0.0
            for i in range(m):
                span = max(span, loads[i])
            makespans[row], flowtimes[row] = span, flow[0]
            out[row] = lam * span + (1.0 - lam) * flow[0] / m
    _GPU[key] = evaluate
    return evaluate


class TaskScheduling:
    """A Braun et al. ETC instance as a problem on keys in [0, m)^n (see the module docstring)."""

    suite = "etc"

    def __init__(self, name: str, lam: float = 0.75, flowtime: str = "eq14"):
        table = instances()
        if name not in table.index:
            raise InvalidInputError(f"unknown ETC instance {name!r}; known: {', '.join(table.index)}")
        if not 0.0 <= lam <= 1.0:
            raise InvalidInputError(f"lambda must lie in [0, 1], got {lam!r}")
        if flowtime not in FLOWTIME_MODES:
            raise InvalidInputError(f"flowtime must be one of {', '.join(FLOWTIME_MODES)}, got {flowtime!r}")
        row = table.loc[name]
        self.name, self.file, self.lam, self.flowtime = name, row["file"], float(lam), flowtime
        self.etc = read_etc(instance_file("etc", self.file))
        self.dim, self.machines = self.etc.shape
        self.lower, self.upper = 0.0, float(self.machines)
        self.min_min_makespan = float(row["minmin_makespan_computed"])

    def __repr__(self) -> str:
        return f"TaskScheduling({self.name!r}, lambda={self.lam}, flowtime={self.flowtime!r})"

    def decode(self, x) -> np.ndarray:
        """The machine of every task: min(floor(key), m - 1)."""
        return np.minimum(np.floor(np.asarray(x)).astype(np.int64), self.machines - 1)

    def parts(self, X, device: str = "cpu") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(fit, makespan, flowtime) of every row of X."""
        global _CPU
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        if X.shape[1] != self.dim:
            raise InvalidInputError(f"{self.name} takes key vectors of length {self.dim}, got shape {X.shape}")
        if (X < self.lower).any() or not np.isfinite(X).all():
            raise InvalidInputError(f"{self.name}: keys must be finite and >= 0")
        completion = self.flowtime == "completion"
        if device == "cpu":
            _CPU = _CPU or _cpu_kernel()
            out, spans, flows = (np.empty(X.shape[0]) for _ in range(3))
            _CPU(self.etc, np.ascontiguousarray(X), self.lam, completion, out, spans, flows)
            return out, spans, flows
        if device != "gpu":
            raise InvalidInputError(f"device {device!r} is not supported; use 'cpu' or 'gpu'")
        from numba import cuda

        from ..functions.gpu import require_gpu

        require_gpu()
        d = [cuda.device_array(X.shape[0]) for _ in range(3)]
        threads = 32 * -(-self.dim // 32)
        _gpu_kernel(self.dim, self.machines, completion)[X.shape[0], threads](
            cuda.to_device(self.etc), cuda.to_device(X), self.lam, *d)
        return tuple(a.copy_to_host() for a in d)

    def evaluate(self, X, device: str = "cpu", dtype="float64"):
        fit = self.parts(X, device)[0]
        return float(fit[0]) if np.asarray(X).ndim == 1 else fit

    def report(self, x) -> dict:
        fit, span, flow = (float(v[0]) for v in self.parts(x))
        return {"instance": self.name, "fit": fit, "makespan": span, "flowtime": flow, "lambda": self.lam,
                "min_min_makespan": self.min_min_makespan, "machines": self.decode(x)}


def get_etc(name: str, **options) -> TaskScheduling:
    return TaskScheduling(name, **options)
