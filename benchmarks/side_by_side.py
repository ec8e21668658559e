"""Side by side on one GPU: the authors' CUDA programs and ours, interleaved, same settings.

The authors' public code (DylanJanssen/GPU-Accelerated-Evolutionary-Optimisation, MIT; measured
at c2b3ef8, ``../shared/anchors/README.md`` section 1) is built here from a source tree you give
(never committed: keep it in the git-ignored ``.authors/``) and run beside our implementations on
F01-F10 in case study 1's setting (DE/rand/1/bin, D=100, NP=250, F=0.5, CR=0.3, 1e7 FEs,
float32). Within each repeat and function the runs alternate, the authors' iDE, our
implementations measured against it (``ide``, ``resident``, ... at each trials-per-launch value),
the authors' All-GPU DE, our ``all_gpu``, so that clock or thermal drift hits both sides alike.

Subcommands
-----------
``pack``      a slim copy of the authors' tree to carry to an offline GPU host (their code and
              the small files it reads; 0.05 MB gzipped instead of 12 MB: their rotation and
              shift files are byte-identical to our ``data/cec`` files, which ``run`` links in
              after checking each file's SHA-256 against the authors' copy at c2b3ef8).
``run``       build (nvcc) and measure; writes ``results/benchmarks/side_by_side/<device>.csv``
              (one row per function, source, implementation, trials per launch) and
              ``<device>_runs.csv`` (one row per run; ``--resume`` continues it).
``summarize`` the ratios ours/authors from those CSVs into ``results/benchmarks/SUMMARY.md``
              (a marked section; the rest of the file is kept) with the issue's targets.

How the authors' programs are driven (their interface, not patched): ``./program FUNC D NP RUNS``
(``differential_evolution/all_gpu_ide.cu`` = "All-GPU iDE" = our ``ide``;
``differential_evolution/all_gpu_de.cu`` = "All-GPU DE" = our ``all_gpu``). Fixed in their code:
F=0.5, CR=0.3, bounds [-100, 100], 1e7 FEs at D=100 (5e6 at D=50), curand seed 0 (every
invocation repeats the same runs; the RUNS of one invocation continue one generator), stop when
a fitness drops below 10e-8 (= 1e-7), float32. They read ``numerical_benchmark/benchmark_data/``
relative to the working directory and write ``output_data/<algorithm>/F<ff>_D<d>_P<np>.txt``
(exit status 0 but no summary when that folder is missing); per run they print
``Function: f Best fitness: e Time: s`` with ``s`` timed by CUDA events around the run (no process
start, context creation or data loading). Their "fitness" is the error (no bias is added).

    python benchmarks/side_by_side.py pack --authors-git-dir /work/.mirror/.../repo --out .carry/authors_src.tgz
    python benchmarks/side_by_side.py run --authors-src .carry/authors_src.tgz --repeats 3 \\
        --implementations ide,all_gpu:graph_generations=1,all_gpu --trials-per-launch 1,30
    python benchmarks/side_by_side.py summarize
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT / "src") not in sys.path:
    sys.path.insert(0, str(ROOT / "src"))

from gpude.io import write_atomic, write_csv_atomic  # noqa: E402

RESULTS = ROOT / "results" / "benchmarks" / "side_by_side"
SUMMARY = ROOT / "results" / "benchmarks" / "SUMMARY.md"
DEFAULT_BUILD = ROOT / ".authors" / "build"

AUTHORS_REPO = "DylanJanssen/GPU-Accelerated-Evolutionary-Optimisation"
AUTHORS_COMMIT_MEASURED = "c2b3ef89531f40796fdd3f0ed4d57a6e9176c805"
#: our implementation name -> the authors' program (their model name in the paper)
AUTHORS_PROGRAMS = {
    "ide": "differential_evolution/all_gpu_ide.cu",     # "All-GPU iDE"
    "all_gpu": "differential_evolution/all_gpu_de.cu",  # "All-GPU DE"
}
AUTHORS_MODEL = {"ide": "All-GPU iDE", "all_gpu": "All-GPU DE"}
AUTHORS_OUTPUT_DIR = {"ide": "all_gpu_ide", "all_gpu": "all_gpu_de"}  # their log_data folders
#: our implementation -> the authors' program its times are divided by (others: the iDE)
BASELINE = {"all_gpu": "all_gpu"}
DEFAULT_BASELINE = "ide"

# The build: the anchors' flags (shared/anchors/README.md section 1: nvcc -O3 -arch=sm_90; the host
# side with g++ -O3 -march=native, passed through -Xcompiler).
NVCC_FLAGS = ("-O3", "-Xcompiler", "-O3,-march=native")
DEFAULT_ARCH = "sm_90"

#: What their code fixes, and the case study 1 setting (theirs at D=100).
AUTHORS_FIXED = dict(F=0.5, CR=0.3, lower=-100.0, upper=100.0, seed=0, stop_below=1e-7,
                     dtype="float32")
AUTHORS_MAX_FES = {100: 10_000_000, 50: 5_000_000}
CASE1 = dict(dim=100, popsize=250, F=0.5, CR=0.3, max_fes=10_000_000, dtype="float32")
FUNCTIONS = [f"F{i:02d}" for i in range(1, 11)]

# Their data files (numerical_benchmark/benchmark_data/, numbered by their F01..F10) are the
# official CEC files renamed; the rotation and shift files are byte-identical to ours:
# their function k -> (our data/cec folder, official function number).
DATA_MAP = {1: ("cec2017", 3), 2: ("cec2017", 4), 3: ("cec2017", 5), 4: ("cec2017", 10),
            5: ("cec2014", 18), 6: ("cec2017", 16), 7: ("cec2014", 22), 8: ("cec2017", 22),
            9: ("cec2017", 24), 10: ("cec2017", 26)}
# SHA-256 of the authors' files at c2b3ef8 (what a file filled in from data/cec must match).
AUTHORS_DATA_SHA256 = {
    "M_1_D100.txt": "1d93b5b45c9ceac3efab57bfabc07d75efdbdd47dc18e063fa7798bf4ea08608",
    "M_1_D50.txt": "b3a2f4bf71cbfcdf07cd7d21584e79aa98db7c386af3a51fbd7c15ae625de46f",
    "shift_data_1.txt": "ad2d0237d226daaadefef885e996a0a9c5faa80c3559ac3b31f0a911caeecbba",
    "M_2_D100.txt": "78fc88a52fb5f406b9fdecab72aa9b4e28e9f9c10dd65e4c132c3aebd1385a97",
    "M_2_D50.txt": "56a9a7d8ff62b619e7d753426acad5a20b1b984b4459102bf35e21a45d3e987f",
    "shift_data_2.txt": "918a5332ca6eb104d752c3889ff6d2e5a22943ef05eb30590938a96330a14fbb",
    "M_3_D100.txt": "1313e1d5e8fc981ac1563f1da17ca044c79cbacde73393fa16221ca0076e2b7f",
    "M_3_D50.txt": "a5258173629992c401cada62f7cfeee714de1be51153781e5e208d8e46e444a5",
    "shift_data_3.txt": "433d5155d4dc7e931b3ac67e45dae657b23c0089d363bba5d463836743509448",
    "M_4_D100.txt": "e1884e6509c34d58fd8d46f3dcbbd9a28a2731d19dce2e3a94cb29b627073843",
    "M_4_D50.txt": "b91a3d916014c0a07ba092d095da85629ff0f53ccdadde682ca5c55fe4b04e77",
    "shift_data_4.txt": "18fbb21bb7bc63de5ed3e3afc5536ff6909a2a80a6f950882b9d0336ccb80e2d",
    "M_5_D100.txt": "7610ccab563d18319609b115c53c8be0496e4f175c250eec1327606d8b801104",
    "M_5_D50.txt": "9d5df57be12149527ae8b8d1257509c1cbfd62faf0dd3bab1d5aa9e2ce8bfc75",
    "shift_data_5.txt": "43f49afc55281f6499fa6f1200cb8a7b1062a2744beeb108535468f4ce2f951d",
    "M_6_D100.txt": "12e68820fa49b9cfeeec51b1c954491c723b4c4591a348650fbac9e9630a7d2e",
    "M_6_D50.txt": "0b4b4ae2a1da73397010921cbd2e5ba4517ab6aa1bf1b8868dbddd7f9340d2e9",
    "shift_data_6.txt": "a3102a59794c2918b75d73c09fc76d58864063a4c815b8beedb5e3d2f4eea8a1",
    "M_7_D100.txt": "f222cf21b49ba1d9d7693ea4c8abfc73d750b3e86cf0b74089b1f12041956681",
    "M_7_D50.txt": "b2c541ea4ae03e24a455241de7d1058e74aaa5f43c79b4d370854b79da6187cd",
    "shift_data_7.txt": "ebcfe2c0e9e356ee70153ec6926d5bc9176ad0f1a9d409b84388d59dca4a9af1",
    "M_8_D100.txt": "8bd555283d60595d74018e627f8617453ac6d421585224676d7344092381d880",
    "M_8_D50.txt": "f27b68876eb32a04f41a9683099bc8932ebd0cdad007bc911dbdfc6a7f1d6623",
    "shift_data_8.txt": "fcb12ef2da290824f763c5a4f1f71ddeb4b4a81799c66e5e73359c9a64370b5e",
    "M_9_D100.txt": "c11b8743c76a82fc8e9c021fe3b50039f5a2808d559e7e3f0af4d4336db51e2c",
    "M_9_D50.txt": "99f4215c4318369d9100e4ec2ad617c1bc8fbf2aa40d0dc028de2c7def928a8b",
    "shift_data_9.txt": "401d366604f760319e418addb8a46e016c38245458315786d2fe0b0c0a20af41",
    "M_10_D100.txt": "4cf6ea30510480f563180019d450b50dd69e74e911605275a68b415d07a72376",
    "M_10_D50.txt": "17d72d8e2d438623b867e626cdc82efc4138fc2186d7e4eecdd3380f666de7c9",
    "shift_data_10.txt": "0e73b8d1dc96890b9a7c018bddb6f19d05b7b498a31dbc572898bd02dbddce1a",
}
#: the pattern of their per-run line
RUN_LINE = re.compile(r"Function:\s*(\d+)\s+Best fitness:\s*(\S+)\s+Time:\s*(\S+)")

TIMING = {
    "authors": "CUDA events inside their program around each run (excludes process start, CUDA "
               "context, data loading); call_wall_s_per_run adds those",
    "gpude": "TrialResult.wall_time_s after a JIT warm-up: a batch's wall time shared fairly "
             "between its trials; call_wall_s_per_run is run_batch's wall time / trials",
}
NOTES_AUTHORS = ("their code fixes seed 0 (curand; each invocation repeats the same runs), F, CR, "
                 "the FE budget and float32, and stops below 1e-7 (10e-8); unpatched")

# ------------------------------------------------------------------------------------- the plan
@dataclasses.dataclass(frozen=True)
class Step:
    """One measured call: the authors' program once, or one batch of our trials."""

    repeat: int
    function: str
    source: str            # "authors" or "gpude"
    implementation: str    # ours: the registry name; theirs: the name of our counterpart
    trials_per_launch: int
    seeds: tuple[int, ...]

    @property
    def key(self) -> tuple:
        return (self.repeat, self.function, self.source, self.implementation, self.trials_per_launch)


def split_implementation(spec: str) -> tuple[str, dict]:
    """``all_gpu:graph_generations=32`` -> (``all_gpu``, {``graph_generations``: 32}): one of our
    implementations with options, ``+`` between two (the spec, unchanged, is its
    ``implementation`` in the CSVs; commas separate implementations on the command line)."""
    from gpude.cli import _number_or_text  # as `gpude run --param KEY=VALUE` reads a value

    name, _, rest = spec.partition(":")
    options = {}
    for item in filter(None, rest.split("+")):
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise SystemExit(f"side_by_side: {spec!r}: options go as name:key=value[+key=value]")
        options[key] = _number_or_text(value)
    return name, options


def baseline_of(implementation: str) -> str:
    """The authors' program an implementation of ours (with or without options) is measured against."""
    return BASELINE.get(split_implementation(implementation)[0], DEFAULT_BASELINE)


def plan(functions, implementations, trials_per_launch=(1,), repeats=1,
         authors=("ide", "all_gpu"), authors_runs=1) -> list[Step]:
    """The measured calls in order: per repeat and function, each authors' program followed by
    our implementations measured against it (each at every trials-per-launch value); ours whose
    baseline is not run come last. Seeds differ between repeats (repeat r, batch of B: r B ..
    r B + B - 1); the authors' seed is theirs (0)."""
    unknown = sorted(set(authors) - set(AUTHORS_PROGRAMS))
    if unknown:
        raise SystemExit(f"side_by_side: no authors' program for {', '.join(unknown)}; known: "
                         f"{', '.join(AUTHORS_PROGRAMS)}")
    steps = []
    for r in range(repeats):
        for fid in functions:
            def ours(impl):
                for b in trials_per_launch:
                    steps.append(Step(r, fid, "gpude", impl, b, tuple(range(r * b, r * b + b))))
            for prog in authors:
                steps.append(Step(r, fid, "authors", prog, 1, (0,) * authors_runs))
                for impl in implementations:
                    if baseline_of(impl) == prog:
                        ours(impl)
            for impl in implementations:
                if baseline_of(impl) not in authors:
                    ours(impl)
    return steps


# ------------------------------------------------------------------------------------- building
def find_nvcc(nvcc: str = "nvcc") -> str:
    """The nvcc to use, or a SystemExit that names the missing tool."""
    found = shutil.which(nvcc) or (shutil.which("/usr/local/cuda/bin/nvcc") if nvcc == "nvcc" else None)
    if not found:
        raise SystemExit(f"side_by_side: nvcc not found ({nvcc!r} is not on PATH, nor "
                         "/usr/local/cuda/bin/nvcc): the authors' programs are CUDA C++ and need "
                         "the CUDA toolkit's compiler; install it or pass --nvcc /path/to/nvcc")
    return found


def build_command(src: Path, build: Path, program: str, nvcc: str = "nvcc", arch: str = DEFAULT_ARCH,
                  extra=()) -> list[str]:
    """nvcc's command line for one of the authors' programs (``ide`` or ``all_gpu``)."""
    return [nvcc, *NVCC_FLAGS[:1], f"-arch={arch}", *NVCC_FLAGS[1:], *extra, "-o",
            str(Path(build) / f"authors_{program}"), str(Path(src) / AUTHORS_PROGRAMS[program])]


def build(src: Path, build_dir: Path, programs, nvcc: str = "nvcc", arch: str = DEFAULT_ARCH,
          extra=()) -> dict[str, Path]:
    """Compile the authors' programs into ``build_dir``; their paths."""
    nvcc = find_nvcc(nvcc)
    build_dir = Path(build_dir).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    out = {}
    for prog in programs:
        cmd = build_command(src, build_dir, prog, nvcc, arch, extra)
        exe, stamp = build_dir / f"authors_{prog}", build_dir / f"authors_{prog}.build"
        # the same command on the same sources built it already (a resumed run on a kept build folder)
        key = " ".join(cmd) + "\n" + _tree_digest(Path(src)) + "\n"
        if exe.exists() and stamp.exists() and stamp.read_text() == key:
            print(f"build: {exe} is up to date", flush=True)
            out[prog] = exe
            continue
        print("build:", " ".join(cmd), flush=True)
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"side_by_side: building the authors' {prog} failed "
                             f"({done.returncode}):\n{done.stderr[-4000:]}")
        stamp.write_text(key)
        out[prog] = exe
    return out


def _tree_digest(src: Path) -> str:
    """SHA-256 over the authors' C++/CUDA sources (what a build depends on)."""
    h = hashlib.sha256()
    for p in sorted(src.rglob("*")):
        if p.suffix in (".cu", ".cuh", ".hpp", ".cpp", ".h"):
            h.update(str(p.relative_to(src)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def authors_commit(src: Path) -> str:
    """The commit a source tree was taken at: its COMMIT file (``pack`` writes one), else unknown."""
    f = Path(src) / "COMMIT"
    return f.read_text().strip() if f.exists() else "unknown"


def unpack_source(src: Path, into: Path) -> Path:
    """A directory tree as is; a .tgz (from ``pack``) unpacked into ``into``."""
    src = Path(src)
    if src.is_dir():
        return src
    if not src.exists():
        raise SystemExit(f"side_by_side: --authors-src {src} does not exist")
    dest = Path(into) / "src"
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    with tarfile.open(src) as tar:
        tar.extractall(dest, filter="data")
    return dest


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def prepare_rundir(src: Path, rundir: Path, function_numbers, dim: int) -> Path:
    """A working directory their programs can run in: numerical_benchmark/benchmark_data/ (their
    files where the source tree has them, else our byte-identical data/cec files, checked) and
    output_data/<algorithm>/."""
    data = Path(rundir) / "numerical_benchmark" / "benchmark_data"
    data.mkdir(parents=True, exist_ok=True)
    theirs = Path(src) / "numerical_benchmark" / "benchmark_data"
    for k in function_numbers:
        folder, cec_fn = DATA_MAP[k]
        wanted = {f"M_{k}_D{dim}.txt": f"M_{cec_fn}_D{dim}.txt",
                  f"shift_data_{k}.txt": f"shift_data_{cec_fn}.txt"}
        if 5 <= k <= 8:  # their code reads a shuffle file for F05..F08 (F08's is unused)
            wanted[f"shuffle_data_{k}_D{dim}.txt"] = None
        for name, ours in wanted.items():
            target = data / name
            if target.exists():
                continue
            if (theirs / name).exists():
                shutil.copyfile(theirs / name, target)
                continue
            if ours is None:
                raise SystemExit(f"side_by_side: {theirs / name} is missing (it is not among our "
                                 "data files; `pack` keeps it)")
            mine = ROOT / "data" / "cec" / folder / ours
            if not mine.exists() or _sha256(mine) != AUTHORS_DATA_SHA256.get(name):
                raise SystemExit(f"side_by_side: {name} is not in the authors' tree and {mine} is "
                                 "missing or differs from their copy at c2b3ef8 (SHA-256)")
            shutil.copyfile(mine, target)
    for d in AUTHORS_OUTPUT_DIR.values():
        (Path(rundir) / "output_data" / d).mkdir(parents=True, exist_ok=True)
    return Path(rundir)


def pack(out: Path, src: Path | None = None, git_dir: Path | None = None) -> Path:
    """A slim .tgz of the authors' tree: everything but the rotation and shift files (ours are
    the same bytes), plus COMMIT."""
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp:
        if git_dir is not None:
            tree = Path(tmp) / "tree"
            tree.mkdir()
            arch = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD"], check=True,
                                  capture_output=True).stdout
            with tarfile.open(fileobj=io.BytesIO(arch)) as t:
                t.extractall(tree, filter="data")
            commit = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True,
                                    capture_output=True, text=True).stdout.strip()
            (tree / "COMMIT").write_text(commit + "\n")
            src = tree
        src = Path(src)
        with tarfile.open(fileobj=buf, mode="w:gz") as tar:
            for p in sorted(src.rglob("*")):
                rel = p.relative_to(src)
                if p.is_dir() or rel.parts[0] == ".git":
                    continue
                if p.parent.name == "benchmark_data" and re.match(r"(M_\d+_D\d+|shift_data_\d+)\.txt$", p.name):
                    continue
                tar.add(p, arcname=str(rel))
    write_atomic(out, buf.getvalue())
    return Path(out)


# ------------------------------------------------------------------------------------- running
def parse_authors_output(text: str) -> list[dict]:
    """Their per-run lines -> [{best_error, wall_s}]."""
    return [dict(best_error=float(m.group(2)), wall_s=float(m.group(3)))
            for m in RUN_LINE.finditer(text)]


def parse_authors_log(path: Path) -> list[int]:
    """The ``evaluations`` line of their output_data file -> FEs per run."""
    for line in Path(path).read_text().splitlines():
        if line.startswith("evaluations"):
            return [int(float(v)) for v in line.split()[1:]]
    return []


class AuthorsRunner:
    """Runs one of the authors' programs in the prepared working directory."""

    def __init__(self, exes: dict, rundir: Path, dim: int, popsize: int, timeout_s: float = 600):
        self.exes, self.rundir, self.dim, self.popsize, self.timeout_s = exes, rundir, dim, popsize, timeout_s

    def __call__(self, step: Step) -> list[dict]:
        k = int(step.function[1:])
        runs = len(step.seeds)
        cmd = [str(Path(self.exes[step.implementation]).resolve()), str(k), str(self.dim), str(self.popsize), str(runs)]
        log = (Path(self.rundir) / "output_data" / AUTHORS_OUTPUT_DIR[step.implementation]
               / f"F{k:02d}_D{self.dim}_P{self.popsize}.txt")
        log.unlink(missing_ok=True)
        t0 = time.perf_counter()
        done = subprocess.run(cmd, cwd=self.rundir, capture_output=True, text=True, timeout=self.timeout_s)
        call = time.perf_counter() - t0
        parsed = parse_authors_output(done.stdout)
        if done.returncode != 0 or len(parsed) != runs:
            raise RuntimeError(f"{' '.join(cmd)} (exit {done.returncode}) printed {len(parsed)} of "
                               f"{runs} runs: {(done.stdout + done.stderr)[-600:]}")
        fes = parse_authors_log(log) if log.exists() else []
        return [dict(p, fes=fes[i] if i < len(fes) else None, seed=0, call_wall_s_per_run=call / runs)
                for i, p in enumerate(parsed)]


class GpudeRunner:
    """Runs our implementations in this process; one warmed-up runner per configuration."""

    def __init__(self, dim, popsize, max_fes, F, CR, dtype, target, options=None):
        self.kw = dict(dim=dim, popsize=popsize, max_fes=max_fes, F=F, CR=CR, dtype=dtype, target=target)
        self.options = dict(options or {})
        self.cache = {}
        self.setup_s = {}

    def runner(self, impl, fid, b):
        key = (impl, fid, b)
        if key not in self.cache:
            from gpude.trial import make_runner

            kw = dict(self.kw)
            name, own = split_implementation(impl)
            opts = {**self.options, **own}
            if b != 1:
                opts["trials_per_launch"] = b
            t0 = time.perf_counter()
            self.cache[key] = make_runner("de", name, fid, kw.pop("dim"), kw.pop("popsize"),
                                          kw.pop("max_fes"), **kw, **opts)
            self.setup_s[key] = time.perf_counter() - t0
        return self.cache[key]

    def __call__(self, step: Step) -> list[dict]:
        r = self.runner(step.implementation, step.function, step.trials_per_launch)
        t0 = time.perf_counter()
        results = r.run_batch(list(step.seeds)) if len(step.seeds) > 1 or step.trials_per_launch > 1 \
            else [r.run(step.seeds[0])]
        call = time.perf_counter() - t0
        return [dict(best_error=x.best_error, wall_s=x.wall_time_s, fes=x.fes_used, seed=x.seed,
                     call_wall_s_per_run=call / len(results)) for x in results]


def measure(steps, run_authors, run_gpude, done_keys=(), on_step=None, deadline=None) -> list[dict]:
    """Run the steps in order (skipping those in ``done_keys``); rows, one per run."""
    rows, done_keys = [], set(done_keys)
    for i, step in enumerate(steps):
        if step.key in done_keys:
            continue
        if deadline is not None and time.monotonic() > deadline:
            print(f"side_by_side: out of time before step {i + 1}/{len(steps)}; --resume goes on", flush=True)
            break
        runner = run_authors if step.source == "authors" else run_gpude
        try:
            runs = runner(step)
            status = "ok"
        except Exception as exc:  # a failed call is a row, never dropped
            runs, status = [dict(best_error=None, wall_s=None, fes=None, seed=None,
                                 call_wall_s_per_run=None)], f"error:{type(exc).__name__}: {exc}"[:400]
        for k, run in enumerate(runs):
            rows.append(dict(repeat=step.repeat, function=step.function, source=step.source,
                             implementation=step.implementation,
                             trials_per_launch=step.trials_per_launch, run=k, status=status, **run))
        print(f"[{i + 1}/{len(steps)}] r{step.repeat} {step.function} {step.source:7s} "
              f"{step.implementation:9s} x{step.trials_per_launch:<3d} {status} " +
              (f"{sum(x['wall_s'] for x in runs) / len(runs):.3f} s/run"
               if status == "ok" else ""), flush=True)
        if on_step is not None:
            on_step(rows)
    return rows


SUMMARY_COLUMNS = ["function", "source", "implementation", "trials_per_launch", "trials",
                   "wall_s_per_run", "wall_s_per_run_min", "wall_s_per_run_max",
                   "call_wall_s_per_run", "best_error_mean", "best_error_min", "best_error_max",
                   "fes_mean", "failed", "repeats", "program", "timing", "notes"]


def aggregate(runs: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """One row per (function, source, implementation, trials_per_launch) from the run rows."""
    out = []
    keys = ["function", "source", "implementation", "trials_per_launch"]
    for key, g in runs.groupby(keys, sort=False):
        ok = g[g["status"] == "ok"]
        src = key[1]
        out.append(dict(
            zip(keys, key), trials=len(ok),
            wall_s_per_run=ok["wall_s"].mean(), wall_s_per_run_min=ok["wall_s"].min(),
            wall_s_per_run_max=ok["wall_s"].max(), call_wall_s_per_run=ok["call_wall_s_per_run"].mean(),
            best_error_mean=ok["best_error"].mean(), best_error_min=ok["best_error"].min(),
            best_error_max=ok["best_error"].max(), fes_mean=pd.to_numeric(ok["fes"]).mean(),
            failed=int((g["status"] != "ok").sum()), repeats=g["repeat"].nunique(),
            program=(f"{AUTHORS_REPO}/{AUTHORS_PROGRAMS[key[2]]} ({AUTHORS_MODEL[key[2]]})"
                     if src == "authors" else f"gpude de/{key[2]}"),
            timing=TIMING[src],
            notes=NOTES_AUTHORS if src == "authors" else
            f"seeds {int(ok['seed'].min()) if len(ok) else ''}..{int(ok['seed'].max()) if len(ok) else ''}",
        ))
    return pd.DataFrame(out, columns=SUMMARY_COLUMNS).assign(**meta)


def device_slug(prov: dict) -> str:
    from gpude import provenance

    return provenance.slug(prov["gpu"] if prov.get("gpu", "none") != "none" else prov.get("cpu", "cpu"))


def cmd_run(args, run_authors=None, run_gpude=None, prov=None) -> int:
    """``run``: build, measure, write; the runners and provenance can be injected (tests)."""
    functions = FUNCTIONS if args.functions == "all" else [f.strip().upper() for f in args.functions.split(",")]
    bad = [f for f in functions if f not in FUNCTIONS]
    if bad:
        raise SystemExit(f"side_by_side: unknown function(s) {', '.join(bad)}; use F01..F10")
    implementations = [i for i in args.implementations.split(",") if i]
    tpls = [int(b) for b in str(args.trials_per_launch).split(",")]
    authors = [a for a in args.authors.split(",") if a]
    if args.dim not in AUTHORS_MAX_FES:
        raise SystemExit(f"side_by_side: the authors' data cover D in {sorted(AUTHORS_MAX_FES)}, not {args.dim}")
    max_fes = AUTHORS_MAX_FES[args.dim]
    steps = plan(functions, implementations, tpls, args.repeats, authors, args.authors_runs)
    if args.dry_run:
        for s in steps:
            print(s.repeat, s.function, s.source, s.implementation, s.trials_per_launch,
                  f"seeds {s.seeds[0]}..{s.seeds[-1]}")
        return 0

    src_commit = "not built"
    build_cmds = ""
    if run_authors is None and authors:
        build_dir = Path(args.build_dir)
        src = unpack_source(Path(args.authors_src), build_dir) if args.authors_src else None
        if src is None:
            raise SystemExit("side_by_side: --authors-src DIR|TGZ is required (or --authors '' to run ours only)")
        extra = [f for flag in args.nvcc_flag for f in flag.split()]
        exes = build(src, build_dir, authors, args.nvcc, args.arch, extra)
        build_cmds = " ; ".join(" ".join(build_command(src, build_dir, p, "nvcc", args.arch, extra))
                                for p in authors)
        rundir = prepare_rundir(src, build_dir / "run", [int(f[1:]) for f in functions], args.dim)
        run_authors = AuthorsRunner(exes, rundir, args.dim, args.popsize)
        src_commit = authors_commit(src)
    if run_gpude is None:
        from numba import cuda  # noqa: F401  (so the provenance names the GPU)

        options = {k: int(v) for k, v in (o.split("=") for o in args.option)}
        run_gpude = GpudeRunner(args.dim, args.popsize, max_fes, AUTHORS_FIXED["F"], AUTHORS_FIXED["CR"],
                                args.dtype, args.target, options)
    if prov is None:
        from gpude import provenance

        prov = provenance.record()
    device = prov.get("gpu", "none")
    out_dir = Path(args.out)
    slug = device_slug(prov)
    runs_csv, summary_csv = out_dir / f"{slug}_runs.csv", out_dir / f"{slug}.csv"
    meta = dict(device=device, dim=args.dim, popsize=args.popsize, F=AUTHORS_FIXED["F"],
                CR=AUTHORS_FIXED["CR"], max_fes=max_fes, dtype=args.dtype, target=args.target,
                authors_commit=src_commit, authors_build=build_cmds, **prov)
    previous = pd.DataFrame()
    if args.resume and runs_csv.exists():
        previous = pd.read_csv(runs_csv)
        previous = previous[previous["status"] == "ok"]
    done = {tuple(k) for k in previous[["repeat", "function", "source", "implementation",
                                        "trials_per_launch"]].itertuples(index=False)} if len(previous) else set()

    def write(rows):
        runs = pd.concat([previous, pd.DataFrame(rows).assign(**meta)], ignore_index=True)
        write_csv_atomic(runs, runs_csv)
        write_csv_atomic(aggregate(runs, meta), summary_csv)

    deadline = time.monotonic() + args.max_seconds if args.max_seconds else None
    rows = measure(steps, run_authors, run_gpude, done, on_step=write, deadline=deadline)
    if rows or not summary_csv.exists():
        write(rows)
    print(f"wrote {summary_csv} and {runs_csv}")
    return 0


# ------------------------------------------------------------------------------------- summary
BEGIN, END = "<!-- side-by-side:begin -->", "<!-- side-by-side:end -->"
#: (label, implementation, trials_per_launch, functions, limit) vs the baseline program's time
TARGETS = [
    ("one trial <= 0.3x the authors' iDE", "{new}", 1, FUNCTIONS, 0.3),
    ("30 trials per launch, per run, <= 0.02x the authors' iDE (F01-F07)", "{new}", 30, FUNCTIONS[:7], 0.02),
    ("30 trials per launch, per run, <= 0.05x the authors' iDE (F08-F10)", "{new}", 30, FUNCTIONS[7:], 0.05),
    ("all_gpu <= 1.0x the authors' All-GPU DE", "all_gpu", 1, FUNCTIONS, 1.0),
]


def ratios(df: pd.DataFrame) -> pd.DataFrame:
    """Ours / the authors' (same device, function and baseline program): one row per our row."""
    theirs = df[df["source"] == "authors"].set_index(["device", "function", "implementation"])["wall_s_per_run"]
    rows = []
    for _, r in df[df["source"] == "gpude"].iterrows():
        base = baseline_of(r["implementation"])
        t = theirs.get((r["device"], r["function"], base))
        rows.append(dict(device=r["device"], function=r["function"], implementation=r["implementation"],
                         trials_per_launch=int(r["trials_per_launch"]), baseline=base,
                         ours_s=r["wall_s_per_run"], authors_s=t,
                         ratio=r["wall_s_per_run"] / t if t and t == t else float("nan")))
    return pd.DataFrame(rows)


def verdicts(rat: pd.DataFrame, device: str, new: str = "resident") -> list[dict]:
    """The issue's targets on one device: per target, the cells and a verdict."""
    out = []
    for label, impl, b, fids, limit in TARGETS:
        impl = impl.format(new=new)
        sel = rat[(rat["device"] == device) & (rat["implementation"] == impl)
                  & (rat["trials_per_launch"] == b)].set_index("function")["ratio"]
        cells = {f: (float(sel[f]) if f in sel.index and sel[f] == sel[f] else None) for f in fids}
        measured = {f: v for f, v in cells.items() if v is not None}
        missed = [f for f, v in measured.items() if v > limit]
        if not measured:
            verdict = "not measured"
        elif len(measured) < len(fids):
            verdict = (f"missed on {len(missed)}" if missed else "met so far") + \
                f" ({len(measured)} of {len(fids)} measured)"
        else:
            verdict = "met" if not missed else f"missed on {len(missed)} of {len(fids)}"
        out.append(dict(label=label.replace("{new}", impl), implementation=impl, trials_per_launch=b,
                        limit=limit, cells=cells, verdict=verdict))
    return out


def _fmt(v, nd=3):
    if v is None or v != v:
        return "-"
    return f"{v:.{nd}g}"


def render_section(df: pd.DataFrame, files, new: str = "resident") -> str:
    lines = [BEGIN, "## Side by side: the authors' programs and ours, interleaved on one GPU", "",
             "Written by `benchmarks/side_by_side.py summarize` from `results/benchmarks/side_by_side/"
             "<device>.csv` (measured by `side_by_side.py run` on a GPU host: the authors' CUDA code, "
             f"{AUTHORS_REPO} built with nvcc -O3 -arch=sm_90, run in alternation with ours in the same "
             "session, case study 1: D=100, NP=250, F=0.5, CR=0.3, 1e7 FEs, float32). Ratio = our mean "
             "wall seconds per run / the authors' on the same device and function (theirs: iDE for "
             "`ide` and new implementations, All-GPU DE for `all_gpu`); below 1 we are faster. With "
             "several trials per launch, ours is a batch's per-run fair share. Their programs fix seed "
             "0 (repeats rerun the same trajectory) and stop below 1e-7.", ""]
    if df.empty:
        lines += ["No side-by-side CSV yet: run `python benchmarks/side_by_side.py run ...` on a GPU "
                  "host (README.md, 'On a GPU host').", "", END]
        return "\n".join(lines) + "\n"
    rat = ratios(df)
    for device in df["device"].drop_duplicates():
        d = df[df["device"] == device]
        sub = files.get(device, "")
        commits = ", ".join(sorted({str(c)[:7] for c in d["authors_commit"].dropna()}))
        lines += [f"### {device}", "",
                  f"Source: `{sub}`; ours at `{str(d['git_commit'].iloc[0])[:12]}`, the authors' at "
                  f"`{commits}`; {int(d['repeats'].max())} repeat(s).", ""]
        head = ["implementation", "trials/launch", "vs", *FUNCTIONS]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        a = d[d["source"] == "authors"].set_index(["implementation", "function"])
        for prog in AUTHORS_PROGRAMS:
            if (prog, FUNCTIONS[0]) in a.index or any((prog, f) in a.index for f in FUNCTIONS):
                lines.append(f"| authors' {AUTHORS_MODEL[prog]} (s/run) | 1 | - | " + " | ".join(
                    _fmt(a.loc[(prog, f), "wall_s_per_run"]) if (prog, f) in a.index else "-"
                    for f in FUNCTIONS) + " |")
        r = rat[rat["device"] == device]
        for (impl, b), g in r.groupby(["implementation", "trials_per_launch"], sort=False):
            g = g.set_index("function")
            lines.append(f"| {impl} | {b} | {AUTHORS_MODEL[g['baseline'].iloc[0]]} | " + " | ".join(
                f"{_fmt(g.loc[f, 'ours_s'])} s = {_fmt(g.loc[f, 'ratio'], 2)}x"
                if f in g.index and g.loc[f, "ours_s"] == g.loc[f, "ours_s"]
                else ("failed" if f in g.index else "-")
                for f in FUNCTIONS) + " |")
        lines += ["", f"Targets (issue 25; the new implementation: `{new}`):", "",
                  "| target | " + " | ".join(FUNCTIONS) + " | verdict |", "|" + "---|" * 12]
        for v in verdicts(rat, device, new):
            cells = []
            for f in FUNCTIONS:
                if f not in v["cells"]:
                    cells.append("")
                elif v["cells"][f] is None:
                    cells.append("-")
                else:
                    x = v["cells"][f]
                    cells.append(f"{'met' if x <= v['limit'] else '**missed**'} {x:.3g}x")
            lines.append(f"| {v['label']} | " + " | ".join(cells) + f" | {v['verdict']} |")
        e = d.set_index(["source", "implementation", "trials_per_launch", "function"])["best_error_mean"]
        lines += ["", "Mean best error at the end (same runs):", "",
                  "| run | trials/launch | " + " | ".join(FUNCTIONS) + " |", "|" + "---|" * 12]
        for (s, impl, b), _ in d.groupby(["source", "implementation", "trials_per_launch"], sort=False):
            name = f"authors' {AUTHORS_MODEL[impl]}" if s == "authors" else impl
            lines.append(f"| {name} | {b} | " + " | ".join(
                _fmt(e.get((s, impl, b, f)), 2) for f in FUNCTIONS) + " |")
        lines.append("")
    lines.append(END)
    return "\n".join(lines) + "\n"


def replace_section(text: str, section: str, begin: str = BEGIN, end: str = END) -> str:
    """``text`` with the marked section replaced, or appended when absent."""
    i, j = text.find(begin), text.find(end)
    if i >= 0 and j > i:
        return text[:i] + section.rstrip("\n") + text[j + len(end):]
    return text.rstrip("\n") + "\n\n" + section


def load_side_by_side(folder: Path) -> tuple[pd.DataFrame, dict]:
    frames, files = [], {}
    for p in sorted(Path(folder).glob("*.csv")):
        if p.stem.endswith("_runs"):
            continue
        df = pd.read_csv(p)
        frames.append(df)
        for dev in df["device"].drop_duplicates():
            files[dev] = str(p.relative_to(ROOT)) if p.is_relative_to(ROOT) else str(p)
    return (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()), files


def cmd_summarize(args) -> int:
    df, files = load_side_by_side(Path(args.results))
    out = Path(args.summary)
    text = out.read_text() if out.exists() else "# DE wall time\n"
    write_atomic(out, replace_section(text, render_section(df, files, args.new_implementation)))
    print(f"wrote the side-by-side section of {out}")
    return 0


# ------------------------------------------------------------------------------------- CLI
def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    k = sub.add_parser("pack", help="a slim .tgz of the authors' tree to carry")
    k.add_argument("--authors-src", help="their source tree")
    k.add_argument("--authors-git-dir", help="or a git dir of their repository (HEAD is packed)")
    k.add_argument("--out", default=str(ROOT / ".carry" / "authors_src.tgz"))
    r = sub.add_parser("run", help="build theirs, run both interleaved, write the CSVs")
    r.add_argument("--authors-src", help="their source tree, or a .tgz from `pack`")
    r.add_argument("--authors", default="ide,all_gpu", help="their programs to run, by our names ('' = none)")
    r.add_argument("--implementations", default="ide,all_gpu", help="ours, comma-separated, options after a colon (e.g. ide,resident,all_gpu,all_gpu:graph_generations=32)")
    r.add_argument("--functions", default="all", help="F01..F10, comma-separated, or all")
    r.add_argument("--trials-per-launch", default="1,30", help="ours: values, comma-separated")
    r.add_argument("--repeats", type=int, default=3)
    r.add_argument("--authors-runs", type=int, default=1, help="RUNS per call of their program")
    r.add_argument("--dim", type=int, default=CASE1["dim"])
    r.add_argument("--popsize", type=int, default=CASE1["popsize"])
    r.add_argument("--dtype", default=CASE1["dtype"])
    r.add_argument("--target", type=float, default=AUTHORS_FIXED["stop_below"],
                   help="ours: stop at this error (theirs stops below 1e-7)")
    r.add_argument("--option", action="append", default=[], help="our implementations' option key=int")
    r.add_argument("--nvcc", default="nvcc")
    r.add_argument("--arch", default=DEFAULT_ARCH)
    r.add_argument("--nvcc-flag", action="append", default=[], help="extra nvcc flags (e.g. -I...)")
    r.add_argument("--build-dir", default=str(DEFAULT_BUILD))
    r.add_argument("--out", default=str(RESULTS))
    r.add_argument("--resume", action="store_true", help="keep the runs CSV's finished steps")
    r.add_argument("--max-seconds", type=float, default=None, help="start no step after this")
    r.add_argument("--dry-run", action="store_true", help="print the plan only")
    s = sub.add_parser("summarize", help="the ratios and verdicts into SUMMARY.md")
    s.add_argument("--results", default=str(RESULTS))
    s.add_argument("--summary", default=str(SUMMARY))
    s.add_argument("--new-implementation", default="resident")
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    if args.command == "pack":
        if not (args.authors_src or args.authors_git_dir):
            raise SystemExit("side_by_side pack: give --authors-src or --authors-git-dir")
        out = pack(Path(args.out), Path(args.authors_src) if args.authors_src else None,
                   Path(args.authors_git_dir) if args.authors_git_dir else None)
        print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB)")
        return 0
    if args.command == "run":
        return cmd_run(args)
    return cmd_summarize(args)


if __name__ == "__main__":
    sys.exit(main())
