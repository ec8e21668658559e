"""Make tests/reference/cec2017/: points and the official CEC 2017 code's values at them.

    python tests/reference/cec2017/make_reference.py <CEC17_fast_pow folder> [--points-only]

<CEC17_fast_pow folder> is the unpacked CEC17_fast_pow-C++.zip of P-N-Suganthan/CEC2017-BoundContrained
(it holds cec17_test_fast_pow.cpp and input_data/; keep it in the git-ignored .authors/). The script

1. draws the points (seeded: numpy's PCG64 with seed 2017) as small integers, so that ``points.npz``
   stays small and every point is exactly the same float64 on every machine (see :func:`points`);
2. builds ``make_points.cpp`` with ``g++ -O2`` (no fast-math) against the official file;
3. runs it in the official folder (the code reads input_data/ from there) and writes ``values.csv``.

Five points per (function, D), F1 and F3..F30 at D = 10, 30, 50, 100 (580 rows):

* 0 ``shift``: x = o (the first D numbers of shift_data_f.txt, row 1 for the compositions);
* 1, 2 ``random``: x = k / 64 with k uniform in [-6400, 6400] (in [-100, 100]^D);
* 3 ``near``: x = o + k 2^-16, k uniform in [-2^15, 2^15) (|x_i - o_i| <= 0.5);
* 4 ``close``: x = o + k 2^-26, k as above (|x_i - o_i| <= 4.9e-4).

The float64 sums o + k 2^-m are correctly rounded IEEE additions, the same in numpy and in C.
"""

from __future__ import annotations

import csv
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FUNCTIONS = (1, *range(3, 31))
DIMS = (10, 30, 50, 100)
KINDS = ("shift", "random", "random", "near", "close")
SEED = 2017
#: per row kind: (base is the shift?, scale of the integer code)
SCALES = {"shift": (True, 0.0), "random": (False, 1.0 / 64.0), "near": (True, 2.0 ** -16),
          "close": (True, 2.0 ** -26)}


def shift_vector(shift_file: Path, dim: int) -> np.ndarray:
    """x = o: the first D numbers of the shift file (row 1 of a composition's 10 rows)."""
    return np.loadtxt(shift_file, ndmin=2)[0, :dim].astype(np.float64)


def draw_codes() -> dict[str, np.ndarray]:
    """The integer codes of every point: ``F{f}_D{D}`` -> int16 array (5, D)."""
    rng = np.random.Generator(np.random.PCG64(SEED))
    codes = {}
    for f in FUNCTIONS:
        for d in DIMS:
            c = np.zeros((len(KINDS), d), dtype=np.int16)
            for r, kind in enumerate(KINDS):
                if kind == "random":
                    c[r] = rng.integers(-6400, 6401, size=d)
                elif kind != "shift":
                    c[r] = rng.integers(-(2 ** 15), 2 ** 15, size=d)
            codes[f"F{f}_D{d}"] = c
    return codes


def points(codes: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """The float64 points (5, D) from their codes and the function's shift vector o."""
    X = np.empty(codes.shape, dtype=np.float64)
    for r, kind in enumerate(KINDS):
        on_shift, scale = SCALES[kind]
        step = codes[r].astype(np.float64) * scale  # exact: |k| < 2^15, scale a power of two
        X[r] = shift + step if on_shift else step
    return X


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    official = Path(argv[0]).resolve()
    codes = draw_codes()
    np.savez_compressed(HERE / "points.npz", **codes)
    if "--points-only" in argv:
        return 0
    lines = []
    for f in FUNCTIONS:
        for d in DIMS:
            X = points(codes[f"F{f}_D{d}"], shift_vector(official / "input_data" / f"shift_data_{f}.txt", d))
            for x in X:
                lines.append(f"{f} {d} " + " ".join(repr(float(v)) for v in x))
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "make_points"
        subprocess.run(["g++", "-O2", "-I", str(official), str(HERE / "make_points.cpp"), "-o", str(exe)],
                       check=True)
        out = subprocess.run([str(exe)], input="\n".join(lines) + "\n", capture_output=True, text=True,
                             cwd=official, check=True).stdout.split("\n")
    rows = [line.split() for line in out if line.strip()]
    assert len(rows) == len(lines), (len(rows), len(lines))
    with open(HERE / "values.csv", "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["function", "dim", "point", "kind", "raw_value", "error_value"])
        for i, (f, d, raw, err) in enumerate(rows):
            w.writerow([f, d, i % len(KINDS), KINDS[i % len(KINDS)], raw, err])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
