"""The authors' CUDA programs of Janssen, Pullan & Liew (All-GPU iDE, All-GPU DE) as competitors.

Their public code (DylanJanssen/GPU-Accelerated-Evolutionary-Optimisation, MIT; measured at
c2b3ef8) runs through the workflow like our
implementations: ``config/experiments/side_by_side.yaml`` names each program as a program spec
(:mod:`gpude.implementations.external`) whose ``build`` and ``command`` call this module::

    python -m gpude.implementations.janssen pack --git-dir DIR --out .authors/GPU-Accelerated-Evolutionary-Optimisation
    python -m gpude.implementations.janssen build --source SRC --build BUILD --program all_gpu_ide [--nvcc-flags ...]
    python -m gpude.implementations.janssen run --build BUILD --program all_gpu_ide FUNC D NP RUNS

``pack`` makes the slim source tree the spec's ``sha256`` pins (their code and the small files it
reads, 0.3 MB instead of 12 MB, plus a ``COMMIT`` file): their rotation and shift files are
byte-identical to our ``data/cec`` files (stored gzip-compressed: :mod:`gpude.cecdata`), which ``build``
writes, uncompressed, into the build folder after checking each against the SHA-256 of the authors' copy at
c2b3ef8 (:data:`AUTHORS_DATA_SHA256`).

How their programs are driven (their interface, unpatched): ``./program FUNC D NP RUNS``. Fixed in
their code: F=0.5, CR=0.3, bounds [-100, 100], 1e7 FEs at D=100 (5e6 at D=50), curand seed 0 (every
call repeats the same runs; the RUNS of one call continue one generator), stop when a fitness
drops below 10e-8 (= 1e-7), float32. They read ``numerical_benchmark/benchmark_data/`` relative to
their working directory (the build folder: the spec's command runs there) and write
``output_data/<algorithm>/F<ff>_D<d>_P<np>.txt`` (exit status 0 but no summary when that folder is
missing); per run they print ``Function: f Best fitness: e Time: s``, ``s`` timed by CUDA events
around the run (no process start, context creation or data loading). Their "fitness" is the error.
``run`` passes their output through and appends ``FEs: n`` to each run's line, ``n`` read from
the ``evaluations`` line of their log file (what their program counted; the line is left as it is
when the log does not list that run), so the spec's pattern (:data:`RUN_LINE`) reads best error,
their time and their FEs.

On a GPU host without Snakemake the experiment runs through ``python -m gpude.campaign interleave``
(:mod:`gpude.campaign.interleave`: the rules' own command lines, theirs and ours alternating).

The module is also a plugin (``plugins: [gpude.implementations.janssen]``): it registers ``ide_x30``,
``resident_x30``, ``all_gpu_x30``, ``block_x30``, ``block_x132`` and ``block_x264``, our implementations
under a second name (rows say
the second name; nothing else differs), so that one experiment runs each at 1 and at 30 trials per
launch (the workflow keys ``trials_per_launch`` by implementation:
``trials_per_launch: {default: 1, ide_x30: 30, ...}``).
"""

from __future__ import annotations

import argparse
import hashlib
import io
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from ..core.errors import GpudeError, InvalidInputError

AUTHORS_REPO = "DylanJanssen/GPU-Accelerated-Evolutionary-Optimisation"
AUTHORS_COMMIT = "c2b3ef89531f40796fdd3f0ed4d57a6e9176c805"
#: their program (its output_data folder's name) -> its source file; their model names in the paper
PROGRAMS = {"all_gpu_ide": "differential_evolution/all_gpu_ide.cu",   # "All-GPU iDE"
            "all_gpu_de": "differential_evolution/all_gpu_de.cu"}     # "All-GPU DE"
MODEL = {"all_gpu_ide": "All-GPU iDE", "all_gpu_de": "All-GPU DE"}
#: the build their times on an H200 (paper/published/janssen_cs1_authors_code_h200.csv) were measured
#: with: nvcc -O3 -arch=sm_90, the host side with
#: g++ -O3 -march=native passed through -Xcompiler
NVCC_FLAGS = "-O3 -arch=sm_90 -Xcompiler -O3,-march=native"
#: their per-run line, with the FEs `run` appends (optional: their own line reads too)
RUN_LINE = (r"Function:\s*\d+\s+Best fitness:\s*(?P<best_error>\S+)\s+Time:\s*(?P<time_s>\S+)"
            r"(?:\s+FEs:\s*(?P<fes>\d+))?")

# Their data files (numerical_benchmark/benchmark_data/, numbered by their F01..F10) are the
# official CEC files renamed; the rotation and shift files are byte-identical to ours:
# their function k -> (our data/cec folder, official function number).
DATA_MAP = {1: ("cec2017", 3), 2: ("cec2017", 4), 3: ("cec2017", 5), 4: ("cec2017", 10),
            5: ("cec2014", 18), 6: ("cec2017", 16), 7: ("cec2014", 22), 8: ("cec2017", 22),
            9: ("cec2017", 24), 10: ("cec2017", 26)}
DIMS = (50, 100)
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


class AuthorsDataError(GpudeError):
    """A data file their programs read is missing or differs from the authors' copy."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def cec_root() -> Path:
    """Our data/cec folder (``GPUDE_DATA_DIR`` where set)."""
    from ..cecdata import data_dir

    return data_dir()


def fill_data(src: Path, rundir: Path, functions=range(1, 11), dims=DIMS, cec: Path | None = None) -> Path:
    """A working directory their programs can run in: ``numerical_benchmark/benchmark_data/`` (their
    files where the source tree has them, else our byte-identical ``data/cec`` files, decompressed from
    ``<name>.gz`` (or a plain ``<name>``) in ``cec``; a rotation or shift file either way checked against
    :data:`AUTHORS_DATA_SHA256`) and ``output_data/<program>/``."""
    from ..cecdata import CECDataError, read_stored, stored_path

    cec = Path(cec) if cec is not None else cec_root()
    data = Path(rundir) / "numerical_benchmark" / "benchmark_data"
    data.mkdir(parents=True, exist_ok=True)
    theirs = Path(src) / "numerical_benchmark" / "benchmark_data"
    for k in functions:
        folder, cec_fn = DATA_MAP[k]
        wanted = {**{f"M_{k}_D{d}.txt": f"M_{cec_fn}_D{d}.txt" for d in dims},
                  f"shift_data_{k}.txt": f"shift_data_{cec_fn}.txt"}
        if 5 <= k <= 8:  # their code reads a shuffle file for F05..F08 (not among our files)
            wanted.update({f"shuffle_data_{k}_D{d}.txt": None for d in dims})
        for name, ours in wanted.items():
            target = data / name
            origin = theirs / name if (theirs / name).is_file() else (cec / folder / ours if ours else None)
            if origin is None:
                raise AuthorsDataError(f"{theirs / name} is missing: it is not among our data files, so the "
                                       "authors' tree must hold it (`python -m gpude.implementations.janssen pack` "
                                       "keeps it)")
            if not stored_path(origin).is_file():
                raise AuthorsDataError(f"{name} is in neither the authors' tree ({theirs}) nor ours "
                                       f"({stored_path(origin)}): restore ours with `gpude fetch-data` or give "
                                       "their full tree")
            try:
                content = read_stored(origin)  # ours: <name>.gz decompressed (their tree's files are plain)
            except CECDataError as exc:
                raise AuthorsDataError(str(exc)) from None
            got = hashlib.sha256(content).hexdigest()
            want = AUTHORS_DATA_SHA256.get(name)
            if want is not None and got != want:
                raise AuthorsDataError(f"{stored_path(origin)} differs from the authors' {name} at "
                                       f"{AUTHORS_COMMIT[:7]} (SHA-256 {got[:12]}... uncompressed, theirs "
                                       f"{want[:12]}...)")
            if not target.is_file() or _sha256(target) != got:
                target.write_bytes(content)
    for name in PROGRAMS:
        (Path(rundir) / "output_data" / name).mkdir(parents=True, exist_ok=True)
    return Path(rundir)


def find_nvcc(nvcc: str = "nvcc") -> str:
    """The nvcc to use, or an error that names the missing tool."""
    found = shutil.which(nvcc) or (shutil.which("/usr/local/cuda/bin/nvcc") if nvcc == "nvcc" else None)
    if not found:
        raise GpudeError(f"nvcc not found ({nvcc!r} is not on PATH, nor /usr/local/cuda/bin/nvcc): the authors' "
                         "programs are CUDA C++ and need the CUDA toolkit's compiler")
    return found


def build(src: Path, build_dir: Path, program: str, nvcc_flags: str = NVCC_FLAGS, nvcc: str = "nvcc") -> Path:
    """Compile one of their programs into ``build_dir/<program>`` and fill the folder's data."""
    if program not in PROGRAMS:
        raise InvalidInputError(f"no program {program!r} of the authors; known: {', '.join(PROGRAMS)}")
    build_dir = Path(build_dir)
    fill_data(src, build_dir)  # (first: a missing data file fails before a minute of nvcc)
    exe = build_dir / program
    cmd = [find_nvcc(nvcc), *shlex.split(nvcc_flags), "-o", str(exe), str(Path(src) / PROGRAMS[program])]
    print(" ".join(cmd), flush=True)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise GpudeError(f"building the authors' {program} failed ({done.returncode}): {done.stderr[-3000:]}")
    return exe


def log_fes(path: Path) -> list[int]:
    """The ``evaluations`` line of their output_data file -> FEs per run (none where absent)."""
    path = Path(path)
    if not path.is_file():
        return []
    for line in path.read_text().splitlines():
        if line.startswith("evaluations"):
            return [int(float(v)) for v in line.split()[1:]]
    return []


def with_fes(stdout: str, fes: list[int]) -> str:
    """Their output with `` FEs: n`` appended to the i-th run's line where their log lists run i."""
    out, k = [], 0
    line_re = re.compile(RUN_LINE)
    for line in stdout.splitlines():
        if line_re.search(line):
            if k < len(fes):
                line = f"{line.rstrip()} FEs: {fes[k]}"
            k += 1
        out.append(line)
    return "\n".join(out) + ("\n" if out else "")


def run(build_dir: Path, program: str, function: int, dim: int, popsize: int, runs: int) -> int:
    """One call of their program in ``build_dir``; its output (with FEs) on standard output, its
    exit status returned."""
    build_dir = Path(build_dir)
    log = build_dir / "output_data" / program / f"F{function:02d}_D{dim}_P{popsize}.txt"
    log.unlink(missing_ok=True)  # (their program appends: only this call's runs)
    done = subprocess.run([str((build_dir / program).resolve()), str(function), str(dim), str(popsize), str(runs)],
                          cwd=build_dir, capture_output=True, text=True)
    sys.stdout.write(with_fes(done.stdout, log_fes(log)))
    sys.stderr.write(done.stderr)
    return done.returncode


def pack(out: Path, src: Path | None = None, git_dir: Path | None = None, tgz: bool = False) -> Path:
    """The slim tree of their code (everything but the rotation and shift files, which ours are, and
    VCS files), plus ``COMMIT``: a folder, or with ``tgz`` a .tgz of it."""
    out = Path(out)
    with tempfile.TemporaryDirectory() as tmp:
        if git_dir is not None:
            tree = Path(tmp) / "tree"
            tree.mkdir()
            archive = subprocess.run(["git", f"--git-dir={git_dir}", "archive", "HEAD"], check=True,
                                     capture_output=True).stdout
            with tarfile.open(fileobj=io.BytesIO(archive)) as t:
                t.extractall(tree, filter="data")
            commit = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], check=True,
                                    capture_output=True, text=True).stdout.strip()
            (tree / "COMMIT").write_text(commit + "\n")
            src = tree
        src = Path(src)
        keep = [p for p in sorted(src.rglob("*")) if p.is_file() and ".git" not in p.relative_to(src).parts
                and not (p.parent.name == "benchmark_data"
                         and re.fullmatch(r"(M_\d+_D\d+|shift_data_\d+)\.txt", p.name))]
        if tgz:
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:gz") as tar:
                for p in keep:
                    tar.add(p, arcname=str(p.relative_to(src)))
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(buf.getvalue())
            return out
        if out.exists():
            shutil.rmtree(out)
        for p in keep:
            (out / p.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, out / p.relative_to(src))
    return out


# ------------------------------------------------------------------ our implementations, second names
#: a second name -> (module, class) of our implementation: one experiment runs both names, each at
#: its own trials_per_launch (the workflow keys trials_per_launch by implementation)
ALIASES = {"ide_x30": ("gpude.implementations.ide", "IDE"),
           "resident_x30": ("gpude.implementations.resident", "ResidentDE"),
           "all_gpu_x30": ("gpude.implementations.all_gpu", "AllGPU"),
           "block_x30": ("gpude.implementations.block", "BlockDE"),
           # a full H100 of de/block's trials: one block per SM (132), and two waves
           "block_x132": ("gpude.implementations.block", "BlockDE"),
           "block_x264": ("gpude.implementations.block", "BlockDE")}


def __getattr__(attr):  # the aliases' classes, made on first use (importing this module loads no numba)
    if attr.startswith("alias_") and attr[6:] in ALIASES:
        from importlib import import_module

        module, cls = ALIASES[attr[6:]]
        base = getattr(import_module(module), cls)
        made = type(f"{cls}_{attr[6:]}", (base,), {"name": attr[6:], "__module__": __name__})
        globals()[attr] = made
        return made
    raise AttributeError(attr)


def _register_aliases() -> None:
    from . import registry

    for alias in ALIASES:
        base, per_launch = alias.rsplit("_x", 1)
        registry.register("de", alias, f"gpude.implementations.janssen:alias_{alias}", "gpu",
                          f"de/{base} under a second name (the side by side: {per_launch} trials per launch)")


if __name__ != "__main__":  # (as `python -m`, this is a build or a run of their program)
    _register_aliases()


# ------------------------------------------------------------------ command line
def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpude.implementations.janssen", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    k = sub.add_parser("pack", help="the slim tree of their code (the spec's source)")
    k.add_argument("--git-dir", help="a git dir of their repository (HEAD is packed)")
    k.add_argument("--source", help="or their source tree")
    k.add_argument("--out", required=True, help="a folder (or with --tgz a .tgz)")
    k.add_argument("--tgz", action="store_true")
    b = sub.add_parser("build", help="compile one program and fill its folder's data")
    b.add_argument("--source", required=True)
    b.add_argument("--build", required=True)
    b.add_argument("--program", required=True, choices=sorted(PROGRAMS))
    b.add_argument("--nvcc-flags", default=NVCC_FLAGS)
    b.add_argument("--nvcc", default="nvcc")
    r = sub.add_parser("run", help="one call of a built program, FEs appended to its lines")
    r.add_argument("--build", required=True)
    r.add_argument("--program", required=True, choices=sorted(PROGRAMS))
    for name in ("function", "dim", "popsize", "runs"):
        r.add_argument(name, type=int)
    args = p.parse_args(argv)
    try:
        if args.command == "pack":
            if not (args.git_dir or args.source):
                p.error("pack: give --git-dir or --source")
            out = pack(Path(args.out), Path(args.source) if args.source else None,
                       Path(args.git_dir) if args.git_dir else None, args.tgz)
            from .external import source_digest

            print(f"wrote {out}" + ("" if args.tgz else f" (source_digest {source_digest(out)})"))
            return 0
        if args.command == "build":
            print(f"built {build(Path(args.source), Path(args.build), args.program, args.nvcc_flags, args.nvcc)}")
            return 0
        return run(Path(args.build), args.program, args.function, args.dim, args.popsize, args.runs)
    except GpudeError as exc:
        print(f"gpude.implementations.janssen: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
