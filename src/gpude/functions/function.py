"""The public face of a benchmark function: :class:`BenchmarkFunction`, and the benchmark-function
view of the problem registry (:func:`get_function`, :func:`list_functions`).

The registry itself is :mod:`gpude.problems.registry` (:func:`gpude.problems.get_problem`); the
functions plug into it (:mod:`gpude.functions.families`) and this module imports it, never the
reverse.
"""

from __future__ import annotations

import threading

import numpy as np

from ..core.errors import InvalidInputError, UnknownFunctionError, UnsupportedDimensionError
from ..problems.base import DEVICES, DTYPES, resolve_dtype  # noqa: F401  (imported from here too)
from ..problems.registry import UnknownProblemError, canonical_name, get_problem, list_problems
from . import cpu
from .program import Program, build_program
from .suites import CEC_FUNCTIONS, FUNCTIONS, SUITES, FunctionDef


class BenchmarkFunction:
    """One benchmark function at one dimension, with its official data loaded.

    Use :func:`gpude.functions.get_function` to obtain one.

    Attributes
    ----------
    fid : str
        ``"F01"``..``"F10"``, ``"Q01"``..``"Q04"`` or ``"N00"``..``"N19"``.
    dim : int
    definition : FunctionDef
        The table entry (kind, basic functions, constants, data files, notes).
    bias : float
        ``f(x*)`` in the official code's terms: the official entry point returns
        ``error + bias``.
    optimum : ndarray, shape (dim,)
        ``x*`` (read-only).
    lower, upper : float
        The search range in every coordinate: [-100, 100], Q03 [-600, 600], Q04 [-5, 5]; the
        Nashed functions their Table 3 boxes.
    """

    def __init__(self, definition: FunctionDef, dim: int, program: Program):
        self.definition = definition
        self.fid = definition.fid
        self.dim = dim
        self.bias = float(definition.bias)
        self.lower, self.upper = self.definition.lower, self.definition.upper
        self.program = program
        self.optimum = program.optimum

    @property
    def name(self) -> str:
        return self.definition.name

    def __repr__(self) -> str:
        d = self.definition
        return (f"<BenchmarkFunction {self.fid} D={self.dim}: {d.name} "
                f"({d.origin.strip()}, {d.kind_name})>")

    def _as_points(self, X) -> tuple[np.ndarray, bool]:
        X = np.asarray(X)
        if X.dtype.kind not in "fiu":
            raise InvalidInputError(
                f"points must be real numbers (float or integer), got dtype {X.dtype}"
            )
        single = X.ndim == 1
        if single:
            X = X[np.newaxis, :]
        if X.ndim != 2 or X.shape[1] != self.dim:
            raise InvalidInputError(
                f"{self.fid} at D={self.dim} takes points of shape (n, {self.dim}) or "
                f"({self.dim},), got shape {np.shape(X) if not single else X.shape[1:]}"
            )
        return X, single

    def evaluate(self, X, device: str = "cpu", dtype="float64", threads: int = 1):
        """Errors ``f(x) - f(x*)`` of the points in ``X``.

        Parameters
        ----------
        X : array_like, shape (n, dim) or (dim,)
            Points (float or integer); converted to ``dtype`` for the arithmetic.
        device : {"cpu", "gpu"}
            ``"cpu"``: the numba evaluator; ``"gpu"``: the CUDA evaluator (a real
            GPU, or numba's CUDA simulator when ``NUMBA_ENABLE_CUDASIM=1``).
        dtype : {"float64", "float32"}
            Arithmetic precision. float32 mirrors the authors' GPU code; its
            accuracy is documented in ``docs/functions.md``.
        threads : int
            CPU only: rows are split across this many threads (GIL-free).

        Returns
        -------
        ndarray of float64, shape (n,), or float for a single point
            Rows containing NaN or +-inf get NaN: such points are outside the
            search space and the official code's result there is meaningless.
        """
        if device not in DEVICES:
            raise InvalidInputError(f"device {device!r} is not supported; use 'cpu' or 'gpu'")
        T = resolve_dtype(dtype)
        if not isinstance(threads, (int, np.integer)) or threads < 1:
            raise InvalidInputError(f"threads must be a positive integer, got {threads!r}")
        X, single = self._as_points(X)
        out = np.full(X.shape[0], np.nan)
        finite = np.isfinite(X).all(axis=1)
        if finite.any():
            rows = X if finite.all() else X[finite]
            if device == "cpu":
                vals = cpu.evaluate(self.program, rows, T, threads=int(threads))
            else:
                from . import gpu  # imports numba.cuda only when asked for

                vals = gpu.evaluate(self.program, rows, T)
            out[finite] = vals
        return float(out[0]) if single else out

    __call__ = evaluate

    def cpu_rows_kernel(self, dtype):
        """``(rows, args)``: ``rows(X, out, *args)`` a numba function (one thread) of every row."""
        return cpu.build_cpu_evaluator(dtype)[0], cpu.program_args(self.program, dtype)

    def cpu_evaluator(self, dtype):
        """``f(X, out)``: errors of the rows of X into ``out`` on the calling thread (numba)."""
        rows, args = self.cpu_rows_kernel(dtype)

        def evaluate(X, out):
            rows(X, out, *args)
        return evaluate

    def gpu_evaluator(self, dtype, **options):
        """A :class:`gpude.functions.gpu.ProgramEvaluator`: rows of a device array on the GPU."""
        from .gpu import ProgramEvaluator

        return ProgramEvaluator(self, dtype, **options)


_CACHE: dict[tuple[str, int], BenchmarkFunction] = {}
_LOCK = threading.Lock()


def list_functions(suite: str | None = None) -> list[str]:
    """Ids of benchmark functions, in order.

    Parameters
    ----------
    suite : str, optional
        ``None`` (default): the CEC functions F01..F10, Q01..Q04 (the ones with official reference
        values in tests/reference/cec, at D = 10, 30, 50, 100); ``"all"``: those, N00..N19, the
        CEC 2017 suite CEC17_F01, CEC17_F03..CEC17_F30 and the large-scale L01..L06 and C01..C20;
        or one suite, ``"janssen"``, ``"qin_cec2005"``, ``"nashed"``, ``"cec2017"``, ``"lastra"``
        or ``"cec2010"``; or the problem instances of Kromer et al.: ``"lop"`` (``"lolib"``: Table 2,
        ``"n-lolib"``: Table 3) and ``"etc"``.
    """
    from .largescale import LARGE_SCALE
    from .largescale import SUITES as LARGE_SUITES

    if suite is None:
        return list(CEC_FUNCTIONS)
    if suite == "all":
        return [*FUNCTIONS, *LARGE_SCALE]
    if suite in ("lop", "lolib", "n-lolib", "etc"):  # problems, not functions: the problem registry's list
        return list_problems(suite)
    if suite in LARGE_SUITES:
        return [fid for fid, f in LARGE_SCALE.items() if f.suite == suite]
    if suite not in SUITES:
        raise InvalidInputError(f"unknown suite {suite!r}; use one of {', '.join((*SUITES, *LARGE_SUITES))}, "
                                "lop, lolib, n-lolib, etc or 'all'")
    return [fid for fid, f in FUNCTIONS.items() if f.suite == suite]


def canonical_id(fid: str) -> str:
    """The id as trial rows record it: ``F01`` for ``f01``; an instance's name as in the paper
    (:func:`gpude.problems.canonical_name`)."""
    return canonical_name(fid)


def get_function(fid: str, dim: int):
    """The benchmark function ``fid`` at dimension ``dim``.

    Parameters
    ----------
    fid : str
        ``"F01"``..``"F10"`` (Janssen et al.), ``"Q01"``..``"Q04"`` (Qin et al.),
        ``"N00"``..``"N19"`` (Nashed et al.'s f0..f19), ``"CEC17_F01"``, ``"CEC17_F03"``..
        ``"CEC17_F30"`` (the CEC 2017 suite; ``"CEC17_F02"`` is refused: the organisers excluded F2),
        ``"L01"``..``"L06"`` (Lastra et al.'s six) or ``"C01"``..``"C20"`` (their CEC 2010 subset);
        case-insensitive. Any other name of the problem registry too (a LOP or ETC instance, ``"be75eec"``,
        ``"N-be75eec"``, ``"ThMhCc"``, or a registered problem): that problem, as
        :func:`gpude.problems.get_problem` gives it (new code asks it directly).
    dim : int
        F, Q and CEC17: 10, 30, 50 or 100 (the dimensions with official data); N: any integer >= 2
        (N07 and N17: 2..100, the width of their CEC 2005 data matrices); L: any integer >= 2;
        C: any positive multiple of 100; an instance: its own size (or ``"instance"``).

    Returns
    -------
    BenchmarkFunction, or :class:`gpude.functions.largescale.LargeScaleFunction` for L and C
        (the same public face; evaluators that stream over D).

    Raises
    ------
    UnknownFunctionError, UnsupportedDimensionError
        With the list of what is supported.
    gpude.cecdata.CECDataError
        If a data file is missing or altered (the message says how to restore it).
    """
    try:
        return get_problem(fid, dim)
    except UnknownProblemError:
        from .largescale import LARGE_SCALE

        raise UnknownFunctionError(
            f"unknown function {fid!r}; available: {', '.join((*FUNCTIONS, *LARGE_SCALE))}, and the "
            "LOP and ETC instances of `gpude problems --suite lop|etc`"
        ) from None


def benchmark_function(key: str, dim) -> BenchmarkFunction:
    """The function ``key`` (an upper-case id of :data:`gpude.functions.suites.FUNCTIONS`) at
    ``dim``, built once per process (the family :data:`gpude.functions.families.BENCHMARK_FUNCTIONS`
    of the problem registry builds its problems with it)."""
    if key not in FUNCTIONS:
        raise UnknownFunctionError(f"unknown function {key!r}; available: {', '.join(FUNCTIONS)}")
    definition = FUNCTIONS[key]
    if not definition.supports(dim):
        if definition.dims is not None:
            why = "the dimensions with official CEC data"
        elif definition.max_dim is not None:
            why = (f"its data matrix, {definition.data_files(2)[0]}, is {definition.max_dim} wide; "
                   "any integer dimension >= 2 otherwise")
        else:
            why = "an integer dimension >= 2"
        raise UnsupportedDimensionError(
            f"{key} is not available at dim={dim!r}; supported dimensions: "
            f"{definition.dims_text()} ({why})"
        )
    dim = int(dim)
    with _LOCK:
        if (key, dim) not in _CACHE:
            _CACHE[(key, dim)] = BenchmarkFunction(definition, dim, build_program(definition, dim))
        return _CACHE[(key, dim)]
