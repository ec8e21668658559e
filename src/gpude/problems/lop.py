"""The linear ordering problem (LOP) on LOLIB and N-LOLIB matrices, as Kromer et al. Tables 2-3.

f(pi) = sum_{i<j} C[pi_i, pi_j] is maximised over orderings pi of the n rows. A candidate is a
vector of n random keys in [0, 1]; its ordering is the stable argsort of the keys (equal keys: the
lower index first). The value never needs the sorted ordering itself: row a comes before row b iff
``x_a < x_b or (x_a == x_b and a < b)``, so f = sum over ordered pairs (a, b) with a before b of
C[a, b]. That is what both evaluators compute (O(n^2) per candidate, as the sum itself): the CPU
one with numba, the GPU one a thread block per candidate and a thread per row (each thread counts
its row's contributions against every other row: the comparisons a sort would make, without
writing the permutation). ``decode`` gives the permutation for reports.

The error the algorithms minimise is ``optimum - f`` (>= 0); Kromer et al.'s error % is
``100 (optimum - f) / optimum``, with the optimum of the table's own instance: Table 2 the original
(non-normalised) LOLIB matrices, Table 3 the normalised N-LOLIB ones (``data/lolib/optima.csv``,
proven by an exact ILP).
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd
from numba import cuda, int64  # module level: the CUDA simulator swaps kernel globals

from ..core.errors import InvalidInputError, UnknownFunctionError
from ..core.io import read_csv
from .base import DeviceEvaluator, Problem
from .instances import instance_file, table_dir

KEY_BOUNDS = (0.0, 1.0)


def read_matrix(path) -> np.ndarray:
    """An n x n integer matrix from a LOLIB (title line, n, n*n integers) or N-LOLIB (n, n rows) file:
    exactly n*n integers after n are read (three LOLIB files repeat the title after the matrix)."""
    lines = open(path).read().split("\n")
    first = lines[0].split()
    heidelberg = not (len(first) == 1 and first[0].isdigit())
    tokens = " ".join(lines[1:] if heidelberg else lines).split()
    n = int(tokens[0])
    values = tokens[1:1 + n * n]
    if len(values) != n * n:
        raise InvalidInputError(f"{path}: {len(values)} integers after n = {n}, expected {n * n}")
    return np.array(values, dtype=np.int64).reshape(n, n)


@cache
def optima() -> pd.DataFrame:
    return read_csv(table_dir("lolib") / "optima.csv").set_index("paper_name")


def list_lop(table: int | None = None) -> list[str]:
    """Instance names (``be75eec`` for Table 2, ``N-be75eec`` for Table 3)."""
    t = optima()
    if table is not None:
        t = t[t["table"].str.contains(f"Table {table}")]
    return list(t.index)


@cache
def _cpu_kernel(parallel: bool):
    import numba

    @numba.njit(nogil=True, parallel=parallel)
    def evaluate(C, X, out, optimum):
        n = X.shape[1]
        for r in numba.prange(X.shape[0]):
            s = 0
            for a in range(n):
                xa = X[r, a]
                for b in range(n):
                    xb = X[r, b]
                    if xa < xb or (xa == xb and a < b):
                        s += C[a, b]
            out[r] = optimum - s
    return evaluate


@cache
def _rows_kernel():
    """The one-thread kernel as ``rows(X, out, C, optimum)``, callable from numba code
    (``master_slave``'s pipeline evaluates chunks of rows with it)."""
    import numba

    kernel = _cpu_kernel(False)

    @numba.njit(nogil=True)
    def rows(X, out, C, optimum):
        kernel(C, X, out, optimum)
    return rows


_GPU: dict = {}


def _gpu_kernel(n: int, dtype):
    """A block per candidate, thread a sums C[a, b] over the rows b that come after row a. The keys
    are staged in shared memory; C is read transposed (thread a reads CT[b, a]), so the threads of a
    warp read consecutive addresses."""
    key = (n, np.dtype(dtype).name)
    if key in _GPU:
        return _GPU[key]
    T = np.dtype(dtype).type

    @cuda.jit(cache=True)
    def evaluate(CT, X, row0, gate, out, optimum):
        if gate[0] == 0:
            return
        row, a = row0 + cuda.blockIdx.x, cuda.threadIdx.x
        x = cuda.shared.array(n, T)
        part = cuda.shared.array(1, int64)
        if a == 0:
            part[0] = 0
        if a < n:
            x[a] = X[row, a]
        cuda.syncthreads()
        if a < n:
            xa = x[a]
            s = 0
            for b in range(n):
                xb = x[b]
                if xa < xb or (xa == xb and a < b):
                    s += CT[b, a]
            cuda.atomic.add(part, 0, s)
        cuda.syncthreads()
        if a == 0:
            out[row] = optimum - part[0]
    _GPU[key] = evaluate
    return evaluate


MAX_GPU_N = 1024  # a thread per row of the matrix, one block per candidate


class LOPEvaluator(DeviceEvaluator):
    """Rows of a device array on the GPU (the evaluator interface of :mod:`gpude.problems.base`)."""

    def __init__(self, problem: LinearOrdering, dtype):
        if problem.dim > MAX_GPU_N:
            raise InvalidInputError(f"{problem.fid}: n = {problem.dim} rows exceed the {MAX_GPU_N} threads of "
                                    "a block (one per row); evaluate it on the CPU")
        self.kernel = _gpu_kernel(problem.dim, dtype)
        self.CT = cuda.to_device(np.ascontiguousarray(problem.C.T))
        self.threads = 32 * -(-problem.dim // 32)
        self.optimum = problem.optimum_value
        self.always = cuda.to_device(np.ones(1, np.int32))

    @property
    def device_bytes(self) -> int:
        return self.CT.nbytes

    def launch(self, X, out, row0: int, n: int, stream=0, gate=None):
        gate = self.always if gate is None else gate
        self.kernel[n, self.threads, stream](self.CT, X, row0, gate, out, self.optimum)

    def prebound(self, X, out, row0: int, n: int, stream, gate=None):
        """``launch`` with its arguments marshalled once (a generation's launch costs microseconds, not
        the tens a numba launch spends typing six arguments)."""
        from ..core.prebound import PreboundLaunch

        gate = self.always if gate is None else gate
        return PreboundLaunch(self.kernel, (self.CT, X, row0, gate, out, self.optimum), n, self.threads,
                              stream).launch


class LinearOrdering(Problem):
    """A LOP instance as a problem on random keys in [0, 1]^n (see the module docstring).

    ``fid`` is the instance's name as in Kromer et al.'s tables (``be75eec``, ``N-be75eec``); the error
    is ``optimum - f`` (0 at a proven optimum).
    """

    suite = "lop"
    lower, upper = KEY_BOUNDS

    def __init__(self, name: str):
        table = optima()
        if name not in table.index:
            raise UnknownFunctionError(f"unknown LOP instance {name!r}; known: {', '.join(table.index[:5])}, ... "
                                       f"({len(table)}; `gpude.problems.list_lop()`)")
        row = table.loc[name]
        self.fid = self.name = name
        self.file, self.optimum_value = row["file"], int(row["optimum"])
        self.table = 3 if name.startswith("N-") else 2
        self.C = read_matrix(instance_file("lolib", self.file))
        self.dim = self.C.shape[0]

    @classmethod
    def from_matrix(cls, C, name: str = "lop", optimum: int | None = None) -> LinearOrdering:
        """A LOP on your own square integer matrix. ``optimum``: its proven optimum, or None for the
        bound sum_{a<b} max(C[a, b], C[b, a]) (never below f, so errors stay >= 0; error % is then
        relative to the bound)."""
        C = np.asarray(C)
        if C.ndim != 2 or C.shape[0] != C.shape[1] or C.shape[0] < 2 or C.dtype.kind not in "iu":
            raise InvalidInputError(f"a LOP matrix must be a square integer matrix of size >= 2, got "
                                    f"{C.dtype} {C.shape}")
        self = cls.__new__(cls)
        self.C = np.ascontiguousarray(C, dtype=np.int64)
        self.fid = self.name = str(name)
        self.file, self.table, self.dim = None, None, C.shape[0]
        upper = np.triu(np.maximum(self.C, self.C.T), 1).sum()
        self.optimum_value = int(upper if optimum is None else optimum)
        return self

    def __repr__(self) -> str:
        return f"LinearOrdering({self.name!r}, n={self.dim}, optimum={self.optimum_value})"

    @staticmethod
    def decode(x) -> np.ndarray:
        """The ordering of a key vector: stable argsort (equal keys: the lower index first)."""
        return np.argsort(np.asarray(x), kind="stable")

    def value(self, perm) -> int:
        """f(pi) = sum_{i<j} C[pi_i, pi_j] of an ordering."""
        perm = np.asarray(perm)
        if sorted(perm.tolist()) != list(range(self.dim)):
            raise InvalidInputError(f"{self.name}: not a permutation of 0..{self.dim - 1}")
        P = self.C[np.ix_(perm, perm)]
        return int(np.triu(P, 1).sum())

    def cpu_evaluator(self, dtype, parallel: bool = False):
        kernel, C, opt = _cpu_kernel(bool(parallel)), self.C, self.optimum_value

        def evaluate(X, out):
            kernel(C, X, out, opt)
        return evaluate

    def cpu_rows_kernel(self, dtype):
        """``(rows, args)``: ``rows(X, out, *args)`` a numba function (one thread) of every row."""
        return _rows_kernel(), (self.C, self.optimum_value)

    def gpu_evaluator(self, dtype, max_rows: int | None = None, **options) -> LOPEvaluator:
        # max_rows (the most rows one launch evaluates, a hint streaming evaluators size buffers by)
        # needs nothing here: a block per row
        if options:
            raise InvalidInputError(f"the LOP evaluator takes no options, got {', '.join(sorted(options))}")
        return LOPEvaluator(self, np.dtype(dtype).type)

    def objective(self, X, device: str = "cpu") -> np.ndarray:
        """f of the ordering of every row of X (keys), as int64."""
        return np.rint(self.optimum_value - np.atleast_1d(self.evaluate(X, device))).astype(np.int64)

    def error_percent(self, X) -> np.ndarray:
        """Kromer et al.'s error %: 100 (optimum - f) / optimum."""
        return 100.0 * np.atleast_1d(self.evaluate(X)) / self.optimum_value

    def summary(self, x) -> dict:
        f = self.value(self.decode(x))
        return {"objective": f, "optimum": self.optimum_value,
                "error_percent": 100.0 * (self.optimum_value - f) / self.optimum_value}

    def report(self, x) -> dict:
        return {"instance": self.name, **self.summary(x), "permutation": self.decode(x)}


@cache
def get_lop(name: str) -> LinearOrdering:
    """The instance (read once per process)."""
    return LinearOrdering(name)
