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

from functools import lru_cache

import numpy as np
import pandas as pd
from numba import cuda, int64  # module level: the CUDA simulator swaps kernel globals

from ..errors import InvalidInputError
from ..instances import data_dir, instance_file

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


@lru_cache(maxsize=None)
def optima() -> pd.DataFrame:
    return pd.read_csv(data_dir("lolib") / "optima.csv").set_index("paper_name")


def list_lop(table: int | None = None) -> list[str]:
    """Instance names (``be75eec`` for Table 2, ``N-be75eec`` for Table 3)."""
    t = optima()
    if table is not None:
        t = t[t["table"].str.contains(f"Table {table}")]
    return list(t.index)


def _cpu_kernel():
    import numba

    @numba.njit(cache=False, nogil=True)
    def evaluate(C, X, out):
        n = X.shape[1]
        for r in range(X.shape[0]):
            x = X[r]
            s = 0
            for a in range(n):
                for b in range(n):
                    if x[a] < x[b] or (x[a] == x[b] and a < b):
                        s += C[a, b]
            out[r] = s
    return evaluate


_CPU = None
_GPU: dict = {}


def _gpu_kernel(n: int):
    if n in _GPU:
        return _GPU[n]

    @cuda.jit
    def evaluate(C, X, out):
        row, a = cuda.blockIdx.x, cuda.threadIdx.x
        part = cuda.shared.array(1, int64)
        if a == 0:
            part[0] = 0
        cuda.syncthreads()
        if a < n:
            x = X[row]
            xa = x[a]
            s = 0
            for b in range(n):
                xb = x[b]
                if xa < xb or (xa == xb and a < b):
                    s += C[a, b]
            cuda.atomic.add(part, 0, s)
        cuda.syncthreads()
        if a == 0:
            out[row] = part[0]
    _GPU[n] = evaluate
    return evaluate


class LinearOrdering:
    """A LOP instance as a problem on random keys in [0, 1]^n (see the module docstring)."""

    suite = "lop"
    lower, upper = KEY_BOUNDS

    def __init__(self, name: str):
        table = optima()
        if name not in table.index:
            raise InvalidInputError(f"unknown LOP instance {name!r}; known: {', '.join(table.index[:5])}, ... "
                                    f"({len(table)}; `gpude.problems.list_lop()`)")
        row = table.loc[name]
        self.name, self.file, self.optimum_value = name, row["file"], int(row["optimum"])
        self.C = read_matrix(instance_file("lolib", self.file))
        self.dim = self.C.shape[0]

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

    def objective(self, X, device: str = "cpu") -> np.ndarray:
        """f of the ordering of every row of X (keys), as int64."""
        global _CPU
        X = np.atleast_2d(np.asarray(X, dtype=np.float64))
        if X.shape[1] != self.dim:
            raise InvalidInputError(f"{self.name} takes key vectors of length {self.dim}, got shape {X.shape}")
        out = np.empty(X.shape[0], np.int64)
        if device == "cpu":
            _CPU = _CPU or _cpu_kernel()
            _CPU(self.C, np.ascontiguousarray(X), out)
        elif device == "gpu":
            from numba import cuda

            from ..functions.gpu import require_gpu

            require_gpu()
            d_out = cuda.device_array(X.shape[0], np.int64)
            threads = 32 * -(-self.dim // 32)
            _gpu_kernel(self.dim)[X.shape[0], threads](cuda.to_device(self.C), cuda.to_device(X), d_out)
            out = d_out.copy_to_host()
        else:
            raise InvalidInputError(f"device {device!r} is not supported; use 'cpu' or 'gpu'")
        return out

    def evaluate(self, X, device: str = "cpu", dtype="float64") -> np.ndarray:
        """Errors ``optimum - f`` (>= 0) of the rows of X, as float64 (the algorithms minimise them)."""
        single = np.asarray(X).ndim == 1
        err = (self.optimum_value - self.objective(X, device)).astype(np.float64)
        return float(err[0]) if single else err

    def error_percent(self, X) -> np.ndarray:
        """Kromer et al.'s error %: 100 (optimum - f) / optimum."""
        return 100.0 * np.atleast_1d(self.evaluate(X)) / self.optimum_value

    def report(self, x) -> dict:
        perm = self.decode(x)
        f = self.value(perm)
        return {"instance": self.name, "objective": f, "optimum": self.optimum_value,
                "error_percent": 100.0 * (self.optimum_value - f) / self.optimum_value, "permutation": perm}


def get_lop(name: str) -> LinearOrdering:
    return LinearOrdering(name)
