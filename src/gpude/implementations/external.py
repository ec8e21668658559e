"""Any program as a competitor: an implementation that builds and runs an outside program per trial.

The five papers' own code is C++/CUDA, as most GPU metaheuristic research code is. A program takes
its place beside our implementations through a *program spec* (a mapping, e.g. an entry of an
experiment file's ``programs:``)::

    programs:
      toy_de:                                  # the implementation's name
        algorithm: de                          # whose parameters it takes (default de)
        device: cpu                            # or gpu (then it runs only where a GPU is)
        source: path/to/their/tree             # optional; hashed, never copied into results
        sha256: 1f0c...                        # optional: refuse a source tree that differs
        build: cc -O2 -o {build}/toy {source}/toy.c -lm   # optional, run once per source hash
        command: "{build}/toy --fid {function} --dim {dim} --np {popsize} --fes {max_fes} --seed {seed}"
        output: jsonl                          # or a regular expression (see below)
        timeout_s: 600                         # optional: a call that runs longer fails
        runs_per_call: one                     # or all: one call makes a batch's trials ({trials})

**Fields** of ``build`` and ``command`` (``{name}``): ``function`` (our id, e.g. F01),
``function_number`` (its trailing digits as a number, e.g. 1: programs that number their functions), ``dim``,
``popsize``, ``max_fes``, ``seed``, ``target``, ``max_time_s`` (empty without one), ``dtype``,
``source``, ``build`` (the program's build folder), ``python`` (this interpreter), ``trials`` (1, or
with ``runs_per_call: all`` the batch's number of trials; ``seed`` is then the first trial's) and every
parameter of the algorithm (DE: ``F``, ``CR``, ``bounds``). The command is split like a shell line
(:func:`shlex.split`) and run without a shell, in the build folder.

**Output.** ``jsonl`` (the protocol for new programs): every line of standard output that is a JSON
object with ``best_error`` is a progress point, the last one the result; optional keys ``fes``
(evaluations used so far), ``time_s`` (the program's own clock, which then becomes the row's
``wall_time_s``), ``x`` (the best point). Any other line is ignored. Where a program does not say how many
evaluations it used, the row says the budget (``max_fes``). A *pattern* (a regular
expression with the named groups ``best_error`` and optionally ``fes`` and ``time_s``) reads
programs that print their own lines, such as the authors': each match is a point, the last the result.

**Several runs per call** (``runs_per_call: all``): for programs that make ``{trials}`` runs in one
process (the authors' take RUNS on their command line and fix their own seed, so separate calls
would repeat one run): every point is one trial's result, in trial order (jsonl: the points of trial
``t`` carry ``"trial": t``, the last of each its result). A trial the program leaves without a result
fails alone.

A trial whose program exits with another status than 0, prints no result or runs past its timeout
raises :class:`ProgramError`; ``gpude run`` keeps it as a row whose ``status`` says why. The row's
``params`` name the program, its source hash and the command run; ``wall_time_s`` is the program's
``time_s`` when it reports one, else the process's wall time (start-up included: ``info``'s
``timed_by`` says which).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

import numpy as np

from ..core.errors import GpudeError, InvalidInputError
from .base import Implementation, TrialResult

#: where builds go (one folder per program and source hash); GPUDE_BUILD_DIR to move it
BUILD_ROOT = Path(os.environ.get("GPUDE_BUILD_DIR", Path.home() / ".cache" / "gpude" / "programs"))


class ProgramError(GpudeError):
    """A program that did not build, or a trial of it that failed."""


@dataclass(frozen=True)
class ProgramSpec:
    """One outside program (see the module docstring for each field)."""

    name: str
    command: str
    algorithm: str = "de"
    device: str = "cpu"
    source: str = ""
    sha256: str = ""
    build: str = ""
    output: str = "jsonl"
    timeout_s: float = 0.0
    runs_per_call: str = "one"
    description: str = ""

    @classmethod
    def from_mapping(cls, name: str, spec: dict, base: Path | None = None) -> ProgramSpec:
        """A spec from a mapping (an experiment file's entry); relative ``source`` paths are taken from
        ``base`` (the file's folder's repository root: the current directory by default)."""
        where = f"program {name!r}"
        if not isinstance(spec, dict):
            raise InvalidInputError(f"{where}: expected a mapping of its fields, got {type(spec).__name__}")
        known = {f.name for f in fields(cls)} - {"name"}
        unknown = sorted(set(spec) - known)
        if unknown:
            raise InvalidInputError(f"{where}: unknown field(s) {', '.join(unknown)}; "
                                    f"known: {', '.join(sorted(known))}")
        if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", name):
            raise InvalidInputError(f"{where}: a name is letters, digits and '_', starting with a letter")
        if not str(spec.get("command", "")).strip():
            raise InvalidInputError(f"{where}: 'command' is required (the command line of one trial)")
        if spec.get("device", "cpu") not in ("cpu", "gpu"):
            raise InvalidInputError(f"{where}: device must be cpu or gpu, got {spec.get('device')!r}")
        output = str(spec.get("output", "jsonl"))
        if output != "jsonl":
            try:
                groups = re.compile(output).groupindex
            except re.error as exc:
                raise InvalidInputError(f"{where}: output is 'jsonl' or a regular expression; {output!r} is "
                                        f"neither ({exc})") from exc
            if "best_error" not in groups:
                raise InvalidInputError(f"{where}: the output pattern needs a named group (?P<best_error>...)")
        if spec.get("runs_per_call", "one") not in ("one", "all"):
            raise InvalidInputError(f"{where}: runs_per_call must be one or all, got {spec.get('runs_per_call')!r}")
        timeout = spec.get("timeout_s", 0) or 0
        if not isinstance(timeout, (int, float)) or timeout < 0:
            raise InvalidInputError(f"{where}: timeout_s must be a number of seconds >= 0, got {timeout!r}")
        source = str(spec.get("source", "") or "")
        if source and not Path(source).is_absolute():
            source = str((base or Path.cwd()) / source)
        return cls(name=name, command=str(spec["command"]), algorithm=str(spec.get("algorithm", "de")),
                   device=str(spec.get("device", "cpu")), source=source, sha256=str(spec.get("sha256", "") or ""),
                   build=str(spec.get("build", "") or ""), output=output, timeout_s=float(timeout),
                   runs_per_call=str(spec.get("runs_per_call", "one")),
                   description=str(spec.get("description", "") or ""))


def source_digest(path: str | Path) -> str:
    """SHA-256 of a source tree (every file's relative path and bytes, in path order; VCS folders
    and __pycache__ left out) or of one file."""
    root = Path(path)
    if not root.exists():
        raise InvalidInputError(f"the program's source {root} does not exist; give its tree (or one file) as "
                                "'source', or leave 'source' out")
    h = hashlib.sha256()
    files = [root] if root.is_file() else sorted(
        p for p in root.rglob("*") if p.is_file() and not ({".git", ".hg", "__pycache__"} & set(p.parts)))
    for p in files:
        h.update(str(p.relative_to(root) if p != root else p.name).encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _format(template: str, values: dict, what: str, name: str) -> str:
    try:
        return template.format(**values)
    except (KeyError, IndexError) as exc:
        raise InvalidInputError(f"program {name!r}: its {what} names the field {exc} that a trial does not "
                                f"have; fields: {', '.join(sorted(values))}") from None


class ExternalProgram(Implementation):
    """A trial = one run of an outside program (:class:`ProgramSpec`); subclassed per program by
    :func:`register_programs`."""

    spec: ProgramSpec = None  # set on each program's subclass
    needs_program = False     # it gets a function's id, not its formula

    def __init__(self, function, params, **options):
        super().__init__(function, params, **options)
        spec = self.spec  # (algorithm, name and device: class attributes of the program's subclass)
        self.digest = source_digest(spec.source) if spec.source else ""
        if spec.sha256 and self.digest != spec.sha256:
            raise InvalidInputError(f"program {spec.name!r}: its source {spec.source} has SHA-256 {self.digest}, not "
                                    f"the {spec.sha256} the spec names (a different tree: fetch the one measured, or "
                                    "update sha256)")
        key = self.digest[:12] if self.digest else hashlib.sha256(spec.build.encode()).hexdigest()[:12]
        self.build_dir = BUILD_ROOT / f"{spec.name}-{key}"
        self._built = False
        if spec.runs_per_call == "all":
            self.trials_per_launch = 1_000_000  # gpude run hands a batch's trials over in one call

    def _fields(self, seed: int | None = None, trials: int = 1) -> dict:
        p = self.params
        values = {k: v for k, v in dataclasses.asdict(p).items()
                  if k not in ("popsize", "max_fes", "target", "max_time_s")}
        digits = re.search(r"(\d+)$", str(self.function.fid))
        values.update(function=self.function.fid, function_number=int(digits.group(1)) if digits else "",
                      dim=self.dim, popsize=p.popsize, max_fes=p.max_fes,
                      target=p.target, max_time_s="" if p.max_time_s is None else p.max_time_s, dtype=p.dtype,
                      source=self.spec.source, build=str(self.build_dir), python=sys.executable, trials=trials)
        if seed is not None:
            values["seed"] = seed
        return values

    def build(self) -> None:
        """Run the build command once per source hash (a marker file says it succeeded), under a lock:
        the workflow's warm-ups of several cells may start together."""
        if self._built:
            return
        import fcntl

        self.build_dir.mkdir(parents=True, exist_ok=True)
        marker = self.build_dir / ".built"
        with open(self.build_dir / ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if self.spec.build and not marker.exists():
                cmd = _format(self.spec.build, self._fields(), "build", self.name)
                res = subprocess.run(shlex.split(cmd), cwd=self.build_dir, capture_output=True, text=True)
                if res.returncode != 0:
                    tail = (res.stdout + res.stderr).strip().splitlines()[-5:]
                    raise ProgramError(f"program {self.name!r} did not build (exit {res.returncode}): {cmd}: "
                                       + " | ".join(tail))
                marker.write_text(cmd + "\n")
        self._built = True

    def warmup(self) -> None:
        self.build()  # (a trial of an outside program compiles nothing of ours)

    def run(self, seed: int) -> TrialResult:
        outcome = self.run_batch([seed])[0]
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def run_batch(self, seeds) -> list:
        """The trials of ``seeds``: a call each, or (``runs_per_call: all``) one call for all of them;
        a trial that failed is its :class:`ProgramError` in the list."""
        if self.spec.runs_per_call == "one" and len(seeds) > 1:
            out = []
            for seed in seeds:
                try:
                    out.append(self.run_batch([seed])[0])
                except ProgramError as exc:
                    out.append(exc)
            return out
        points, measured, cmd = self._call(seeds[0], len(seeds))
        if self.spec.runs_per_call == "one":
            return [self._from_points(seeds[0], points, measured, cmd)]
        per_trial = split_trials(points, len(seeds), self.spec.output)
        out = []
        for t, seed in enumerate(seeds):
            if per_trial[t]:
                out.append(self._from_points(seed, per_trial[t], measured / len(seeds), cmd))
            else:
                out.append(ProgramError(f"program {self.name!r} printed no result for trial {t} of its call's "
                                        f"{len(seeds)}"))
        return out

    def _call(self, seed: int, trials: int):
        """One process of the program: its points, its wall time and the command line."""
        self.build()
        cmd = _format(self.spec.command, self._fields(seed, trials), "command", self.name)
        t0 = time.perf_counter()
        try:
            res = subprocess.run(shlex.split(cmd), cwd=self.build_dir, capture_output=True, text=True,
                                 timeout=self.spec.timeout_s or None)
        except subprocess.TimeoutExpired:
            raise ProgramError(f"program {self.name!r} ran past its timeout_s ({self.spec.timeout_s:g} s)") from None
        except OSError as exc:
            raise ProgramError(f"program {self.name!r} could not start: {exc} (command: {cmd})") from None
        measured = time.perf_counter() - t0
        if res.returncode != 0:
            tail = (res.stderr or res.stdout).strip().splitlines()[-3:]
            raise ProgramError(f"program {self.name!r} exited with status {res.returncode}: " + " | ".join(tail))
        points = read_points(res.stdout, self.spec.output)
        if not points:
            what = "no JSON line with best_error" if self.spec.output == "jsonl" else "no match of its output pattern"
            raise ProgramError(f"program {self.name!r} printed no result ({what})")
        return points, measured, cmd

    def _from_points(self, seed, points, measured, cmd) -> TrialResult:
        try:
            return self._read_result(seed, points, measured, cmd)
        except (TypeError, ValueError) as exc:
            raise ProgramError(f"program {self.name!r} printed a result gpude cannot read ({exc}): "
                               f"{points[-1]!r}") from None

    def _read_result(self, seed, points, measured, cmd) -> TrialResult:
        p = self.params
        last = points[-1]
        best = float(last["best_error"])
        fes = int(last.get("fes") or p.max_fes)
        reported = last.get("time_s")
        wall = float(reported) if reported is not None else measured
        trace_fes = np.array([int(q.get("fes") or fes) for q in points])
        trace_best = np.minimum.accumulate(np.array([float(q["best_error"]) for q in points]))
        trace_time = np.array([float(q["time_s"]) if q.get("time_s") is not None else math.nan for q in points])
        hit = bool(best <= p.target)
        first_hit = int(np.argmax(trace_best <= p.target)) if hit else None
        x = np.asarray(last.get("x", []), dtype=np.float64)
        info = {"options": {"program": self.name, "source_sha256": self.digest, "command": cmd},
                "timed_by": "program" if reported is not None else "process", "process_wall_s": measured}
        return TrialResult(
            algorithm=self.algorithm, implementation=self.name, function=self.function.fid, dim=self.dim,
            popsize=p.popsize, seed=seed, params=p, best_error=best, best_x=x, fes_used=fes,
            generations=max(0, -(-fes // p.popsize) - 1), wall_time_s=wall, hit_target=hit,
            fes_to_target=int(trace_fes[first_hit]) if hit else None,
            time_to_target_s=(float(trace_time[first_hit]) if hit and not math.isnan(trace_time[first_hit]) else None),
            trace={"generation": np.maximum(0, -(-trace_fes // p.popsize) - 1), "fes": trace_fes,
                   "best_error": trace_best, "time_s": trace_time},
            info=info, stopped_by="target" if hit else "budget")


def read_points(stdout: str, output: str) -> list[dict]:
    """The progress points of a program's standard output (see the module docstring)."""
    points = []
    if output == "jsonl":
        for line in stdout.splitlines():
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict) and "best_error" in obj:
                points.append(obj)
        return points
    for m in re.finditer(output, stdout, re.M):
        points.append({k: v for k, v in m.groupdict().items() if v is not None})
    return points


def split_trials(points: list[dict], trials: int, output: str) -> list[list[dict]]:
    """The points of a call of several runs, per trial: jsonl by their ``trial`` key, a pattern's
    matches one per trial in order."""
    per_trial: list[list[dict]] = [[] for _ in range(trials)]
    for k, point in enumerate(points):
        t = int(point.get("trial", -1)) if output == "jsonl" else k
        if 0 <= t < trials:
            per_trial[t].append(point)
    return per_trial


def register_programs(programs: dict, base: Path | None = None) -> list[str]:
    """Register each program of a ``programs:`` mapping as an implementation of its algorithm (an
    entry ``algorithm/name`` of :mod:`gpude.implementations.registry`); returns their names."""
    from . import registry

    names = []
    for name, raw in (programs or {}).items():
        spec = ProgramSpec.from_mapping(str(name), raw, base)
        attr = f"program_{spec.name}"
        existing = globals().get(attr)
        if existing is None or existing.spec != spec:
            globals()[attr] = type(f"Program_{spec.name}", (ExternalProgram,), {"spec": spec, "name": spec.name,
                                                                              "algorithm": spec.algorithm,
                                                                              "device": spec.device})
        registry.register(spec.algorithm, spec.name, f"{__name__}:{attr}", spec.device,
                          spec.description or f"outside program: {spec.command.split()[0]}")
        names.append(spec.name)
    return names


def load_programs(path: str | Path | None) -> list[str]:
    """Register the ``programs:`` of a YAML file (an experiment file, or a file of programs alone);
    relative sources are taken from the current directory (the repository root in the workflow)."""
    if not path:
        return []
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InvalidInputError(f"--programs {p}: no such file (an experiment file with a 'programs:' key)")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"--programs {p}: not a readable YAML file ({' '.join(str(exc).split())})") from None
    if not data:
        raise InvalidInputError(f"--programs {p}: the file is empty (an experiment file with a 'programs:' key)")
    if not isinstance(data, dict) or not isinstance(data.get("programs", {}), dict):
        raise InvalidInputError(f"--programs {p}: expected a mapping with a 'programs:' mapping of name -> spec")
    return register_programs(data.get("programs", {}))
