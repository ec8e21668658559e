"""Brest's jSO (C++, CEC 2017) as an outside program: the anchor our jSO is compared with.

jSO (Brest, Sepesy Maucec & Boskovic, "Single Objective Real-Parameter Optimization: Algorithm jSO",
CEC 2017) was published as C++ by its authors; the copy used here is the one in
``justinjk007/Pentagonal-tiling`` at :data:`BREST_COMMIT` (3c4ad79, "Added all files from the new DE
algorithm"), folder ``src/DE/``: Brest's files as he released them (README dated May 29, 2017). That
repository changed them in later commits (``M_PI``, clang-format, its own fitness function; at its
HEAD they sit in ``archive/DE/``), so the commit before those changes is pinned.

Nothing in their files is changed. Their ``main.cc`` (D = 10 fixed, 51 runs of F1..F30, seed from
the clock, results to files) is replaced by our driver, ``driver.cpp`` beside this file, compiled with
their ``lshade.cc``, ``search_algorithm.cc``, ``de.h`` and the official ``cec17_test_func.cc`` they
ship. The driver takes ``--function cec17_fNN --dim D --seed S [--max-fes N] [--runs R] [--popsize
NP]`` and prints gpude's JSON-lines protocol (:mod:`gpude.implementations.external`); it seeds their
generator, C's ``rand()`` (glibc), with ``srand(S + r)`` for run r (the low 32 bits).

Build: ``g++`` with :data:`CXX_FLAGS` (``-O2 -ffp-contract=off``, not their Makefile's ``-Ofast
-march=native``: ``-Ofast`` implies ``-ffast-math``, which lets the compiler reorder and contract
floating-point operations; without it the official function code computes in the same IEEE double
arithmetic as everywhere else, and the binary runs on any x86-64 host). Only ``g++`` is needed.

Data: their ``cec17_test_func`` reads ``input_data/M_<f>_D<d>.txt``, ``shift_data_<f>.txt`` and (hybrid
and two composition functions) ``shuffle_data_<f>_D<d>.txt`` from its working directory. Their tree
ships the official 328 files; :func:`pack` leaves them out (the pinned tree is their code), and
:func:`fill_data` copies each file a run needs from our ``data/cec/cec2017`` (checked by
:mod:`gpude.cecdata` against ``data/cec/SHA256SUMS``) after checking it against the SHA-256 of their
copy at 3c4ad79 (``input_data.sha256`` beside this file; line endings aside: their files are LF, the
official CRLF, ``fscanf`` reads both alike).

Commands (``python -m gpude.implementations.jso_brest ...``)::

    pack  --git-dir DIR --out .authors/jso      # their src/DE at 3c4ad79, less input_data/, plus COMMIT
    build --source .authors/jso --build DIR     # g++ their files + driver.cpp -> DIR/jso_brest
    fill  --build DIR --functions 1,3 --dims 10,30   # DIR/input_data/ from data/cec/cec2017
    run   --source SRC --build DIR -- --function cec17_f01 --dim 10 --seed 1   # fill, then the driver

``run`` rebuilds first where the driver or the flags changed since the build folder's build (a
program's build folder is keyed by their tree's hash alone), and fills that function's data.

As a program spec (``config/programs/jso_brest.yaml``: ``gpude run --plugin gpude.implementations.jso_brest
--programs config/programs/jso_brest.yaml --algorithm jso --implementation brest ...``), trial rows say
``jso/brest``. Importing this module (``plugins: [gpude.implementations.jso_brest]``) registers the
algorithm name ``jso`` with a parameter class of the run fields alone where no ``jso`` is registered
yet (gpude's own jSO registers its own).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ...core.errors import GpudeError, InvalidInputError

BREST_REPO = "justinjk007/Pentagonal-tiling"
BREST_COMMIT = "3c4ad79d6de33a75a8473fa38c7a32eeb94f44f3"
BREST_PATH = "src/DE"
#: :func:`gpude.implementations.external.source_digest` of the tree :func:`pack` makes at BREST_COMMIT
SOURCE_SHA256 = "b1ed90b4d7bc6608583c72b575604dee0938b075be275ad4d29b26c57cc4936d"
#: their files compiled (main.cc is not: driver.cpp replaces it)
SOURCES = ("lshade.cc", "search_algorithm.cc", "cec17_test_func.cc")
HEADER = "de.h"
HERE = Path(__file__).resolve().parent
DRIVER = HERE / "driver.cpp"
DATA_SUMS = HERE / "input_data.sha256"
#: no -Ofast/-ffast-math (their Makefile's): the official function code in plain IEEE double
#: arithmetic, no FMA contraction whatever -march is added; no -march: any x86-64 host runs it
CXX_FLAGS = "-O2 -ffp-contract=off"
EXE = "jso_brest"
DIMS = (10, 30, 50, 100)
#: the 29 functions of CEC 2017 (F2 was excluded by the organisers; the code still has it)
FUNCTIONS = (1, *range(3, 31))


class BrestError(GpudeError):
    """Their tree, its build or a data file it reads is missing or not the pinned one."""


# ------------------------------------------------------------------ names and sizes
def function_number(name) -> int:
    """``cec17_fNN`` (gpude's CEC 2017 names) or a number -> Brest's function number NN (1..30)."""
    text = str(name).strip()
    m = re.fullmatch(r"(?:cec17_f)?(\d{1,2})", text, re.I)
    if not m or not 1 <= int(m.group(1)) <= 30:
        raise InvalidInputError(f"Brest's jSO runs the CEC 2017 functions cec17_f01..cec17_f30, not {name!r}")
    return int(m.group(1))


def jso_popsize(dim: int) -> int:
    """jSO's initial population, as their main.cc sets it: round(25 sqrt(D) ln D)."""
    return int(math.floor(math.sqrt(dim) * math.log(dim) * 25 + 0.5))


def needed_files(function: int, dim: int) -> list[str]:
    """The input_data files their cec17_test_func reads for one function at one dimension."""
    names = [f"M_{function}_D{dim}.txt", f"shift_data_{function}.txt"]
    if 11 <= function <= 20 or function in (29, 30):
        names.append(f"shuffle_data_{function}_D{dim}.txt")
    return names


# ------------------------------------------------------------------ their tree
def source_digest(path: Path) -> str:
    from ..external import source_digest as digest

    return digest(path)


def check_source(src: Path, want: str | None = None) -> str:
    """Their tree's digest, or an error where it is missing or not the pinned one."""
    src = Path(src)
    want = SOURCE_SHA256 if want is None else want
    missing = [n for n in (*SOURCES, HEADER) if not (src / n).is_file()]
    if missing:
        raise BrestError(f"Brest's jSO tree {src} lacks {', '.join(missing)}: make it with `python -m "
                         f"gpude.implementations.jso_brest pack --git-dir <{BREST_REPO}'s git dir> --out {src}`")
    got = source_digest(src)
    if want and got != want:
        raise BrestError(f"Brest's jSO tree {src} has SHA-256 {got}, not the pinned {want} (their src/DE at "
                         f"{BREST_COMMIT[:7]}, packed by `pack`): a changed tree is not the measured program")
    return got


def pack(out: Path, git_dir: Path, commit: str = BREST_COMMIT) -> Path:
    """Their ``src/DE`` at ``commit``, without ``input_data/`` (ours are the same files: :func:`fill_data`),
    plus a ``COMMIT`` file: the tree :data:`SOURCE_SHA256` pins."""
    out = Path(out)
    archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", commit, BREST_PATH], check=True,
                             capture_output=True).stdout
    full = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", commit], check=True, capture_output=True,
                          text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(fileobj=io.BytesIO(archive)) as t:
            t.extractall(tmp, filter="data")
        tree = Path(tmp) / BREST_PATH
        if out.exists():
            shutil.rmtree(out)
        for p in sorted(tree.rglob("*")):
            rel = p.relative_to(tree)
            if p.is_file() and rel.parts[0] != "input_data":
                (out / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(p, out / rel)
    (out / "COMMIT").write_text(f"{full}\n{BREST_REPO} {BREST_PATH}\n")
    return out


# ------------------------------------------------------------------ data
def brest_data_sums() -> dict[str, str]:
    """SHA-256 of each of their input_data files at BREST_COMMIT (LF line endings, as theirs are)."""
    sums = {}
    for line in DATA_SUMS.read_text().splitlines():
        if line.strip():
            digest, name = line.split()
            sums[name] = digest
    return sums


def _lf_sha256(data: bytes) -> str:
    return hashlib.sha256(data.replace(b"\r\n", b"\n")).hexdigest()


def fill_data(build_dir: Path, functions=FUNCTIONS, dims=DIMS) -> Path:
    """``build_dir/input_data/``: each file the functions need at the dims, copied from our
    ``data/cec/cec2017`` (verified against ``data/cec/SHA256SUMS``) and checked against their copy."""
    from ... import cecdata

    data = Path(build_dir) / "input_data"
    data.mkdir(parents=True, exist_ok=True)
    theirs = brest_data_sums()
    for f in functions:
        for d in dims:
            for name in needed_files(int(f), int(d)):
                rel = f"cec2017/{name}"
                try:
                    plain = cecdata.read_bytes(rel)  # verified, uncompressed bytes
                    origin = cecdata.verify(rel)  # the stored file (<name>.gz), for messages
                except cecdata.CECDataError as exc:
                    raise BrestError(f"{name} (CEC 2017 F{f} at D = {d}) is not among our checked data files: "
                                     f"{' '.join(str(exc).split())}") from None
                got = _lf_sha256(plain)
                if got != theirs.get(name):
                    raise BrestError(f"{origin} differs from Brest's input_data/{name} at {BREST_COMMIT[:7]} "
                                     f"(SHA-256 {got[:12]}... with LF line endings, theirs "
                                     f"{str(theirs.get(name))[:12]}...)")
                target = data / name
                if not target.is_file() or target.read_bytes() != plain:
                    tmp = target.with_name(f".{name}.{os.getpid()}")
                    tmp.write_bytes(plain)
                    os.replace(tmp, target)  # (runs of one cell may fill at once)
    return Path(build_dir)


# ------------------------------------------------------------------ build and run
def find_cxx(cxx: str = "g++") -> str:
    found = shutil.which(cxx)
    if not found:
        raise BrestError(f"{cxx!r} not found on PATH: Brest's jSO is C++ and is built with g++")
    return found


def stamp(cxx_flags: str = CXX_FLAGS) -> str:
    """What a build folder's binary was made from besides their tree: our driver and the flags."""
    return f"driver {hashlib.sha256(DRIVER.read_bytes()).hexdigest()} flags {cxx_flags}\n"


def build(src: Path, build_dir: Path, cxx_flags: str = CXX_FLAGS, cxx: str = "g++",
          sha256: str | None = None, echo: bool = True) -> Path:
    """Compile their files with our driver into ``build_dir/jso_brest`` (their tree checked first)."""
    src, build_dir = Path(src).resolve(), Path(build_dir)
    check_source(src, sha256)
    build_dir.mkdir(parents=True, exist_ok=True)
    (build_dir / "input_data").mkdir(exist_ok=True)
    exe = build_dir / EXE
    tmp = build_dir / f".{EXE}.{os.getpid()}"
    cmd = [find_cxx(cxx), *shlex.split(cxx_flags), f"-I{src}", "-o", str(tmp), str(DRIVER),
           *(str(src / s) for s in SOURCES), "-lm"]
    if echo:
        print(" ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        raise BrestError(f"building Brest's jSO failed ({done.returncode}): {done.stderr[-3000:]}")
    os.replace(tmp, exe)
    (build_dir / ".stamp").write_text(stamp(cxx_flags))
    return exe


def ensure_built(src: Path, build_dir: Path, cxx_flags: str = CXX_FLAGS) -> Path:
    """The binary, rebuilt (under a lock) where the driver or the flags changed since it was built."""
    import fcntl

    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    exe, marker = build_dir / EXE, build_dir / ".stamp"
    if exe.is_file() and marker.is_file() and marker.read_text() == stamp(cxx_flags):
        return exe
    with open(build_dir / ".lock-jso", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (exe.is_file() and marker.is_file() and marker.read_text() == stamp(cxx_flags)):
            build(src, build_dir, cxx_flags, echo=False)  # (no line on stdout: that is the program's output)
    return exe


def driver_args(argv: list[str]) -> tuple[int, int]:
    """(function, dim) of the driver's arguments, for the data a run needs."""
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("--function", required=True)
    p.add_argument("--dim", type=int, required=True)
    known, _ = p.parse_known_args(argv)
    return function_number(known.function), known.dim


def run(src: Path, build_dir: Path, argv: list[str], cxx_flags: str = CXX_FLAGS) -> int:
    """One call of the driver in ``build_dir`` (built and filled first); its output passed through."""
    exe = ensure_built(src, build_dir, cxx_flags)
    function, dim = driver_args(argv)
    if dim in DIMS:  # (another D: the driver's own message)
        fill_data(build_dir, [function], [dim])
    sys.stdout.flush()
    return subprocess.run([str(exe.resolve()), *argv], cwd=build_dir).returncode


# ------------------------------------------------------------------ plugin: the algorithm name jso
def _register_algorithm() -> None:
    from ...algorithms import PARAMS, register_algorithm

    if "jso" not in PARAMS:
        register_algorithm("jso", f"{__name__}:BrestJSOParams")


def __getattr__(attr):  # the parameter class, made on first use (importing this module loads no numpy)
    if attr == "BrestJSOParams":
        from ...algorithms.base import RunParams

        @dataclass(frozen=True)
        class BrestJSOParams(RunParams):
            """jSO's run fields alone: Brest's program fixes its own parameters (NP_init, H, p, archive)."""

            min_popsize = 4

        BrestJSOParams.__module__ = __name__
        globals()[attr] = BrestJSOParams
        return BrestJSOParams
    raise AttributeError(attr)


if __name__ != "__main__":
    _register_algorithm()


# ------------------------------------------------------------------ command line
def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpude.implementations.jso_brest", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    k = sub.add_parser("pack", help="their src/DE at the pinned commit, less input_data/ (the spec's source)")
    k.add_argument("--git-dir", required=True, help=f"a git dir of {BREST_REPO}")
    k.add_argument("--commit", default=BREST_COMMIT)
    k.add_argument("--out", required=True)
    b = sub.add_parser("build", help="compile their files with our driver")
    b.add_argument("--source", required=True)
    b.add_argument("--build", required=True)
    b.add_argument("--cxx-flags", default=CXX_FLAGS)
    b.add_argument("--cxx", default="g++")
    f = sub.add_parser("fill", help="the build folder's input_data/ from data/cec/cec2017")
    f.add_argument("--build", required=True)
    f.add_argument("--functions", default=",".join(map(str, FUNCTIONS)), help="e.g. 1,3,5 (default: all 29)")
    f.add_argument("--dims", default=",".join(map(str, DIMS)))
    r = sub.add_parser("run", help="one call of the driver (built and filled first); its arguments after --")
    r.add_argument("--source", required=True)
    r.add_argument("--build", required=True)
    r.add_argument("--cxx-flags", default=CXX_FLAGS)
    r.add_argument("driver", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    try:
        if args.command == "pack":
            out = pack(Path(args.out), Path(args.git_dir), args.commit)
            print(f"wrote {out} (source_digest {source_digest(out)})")
            return 0
        if args.command == "build":
            print(f"built {build(Path(args.source), Path(args.build), args.cxx_flags, args.cxx)}")
            return 0
        if args.command == "fill":
            fill_data(Path(args.build), [function_number(x) for x in args.functions.split(",")],
                      [int(x) for x in args.dims.split(",")])
            print(f"filled {Path(args.build) / 'input_data'}")
            return 0
        argv = args.driver[1:] if args.driver[:1] == ["--"] else args.driver
        return run(Path(args.source), Path(args.build), argv, args.cxx_flags)
    except GpudeError as exc:
        print(f"gpude.implementations.jso_brest: {exc}", file=sys.stderr)
        return 1
