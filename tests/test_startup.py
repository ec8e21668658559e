"""Start-up of a `gpude run` (docs/startup.md): no heavy imports that a command does not need, the
on-disk cache keys of CPU functions and CUDA kernels, and `gpude warmup`, which fills the cache so
that a run only loads it. Timings are not asserted here (benchmarks/startup.py measures them)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def python(*args, env=None, timeout=300):
    res = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, **(env or {})})
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout, res.stderr


def test_the_command_line_imports_neither_numba_nor_pandas_before_a_command_needs_them():
    out, _ = python("-c", "import sys, gpude, gpude.cli; gpude.cli.build_parser(); "
                          "print(sorted(m for m in ('numba', 'pandas', 'scipy', 'matplotlib') if m in sys.modules))")
    assert out.strip() == "[]"


def test_the_workflows_report_wiring_imports_no_scipy_stats():
    # common.smk asks every report section for its outputs at each Snakemake start: the sections load
    # scipy.stats (about a second) only where a table is made
    out, _ = python("-c", "import sys, gpude.report.document as d, gpude.study.experiment; d._sections(); "
                          "import gpude.stats.bootstrap; print('scipy.stats' in sys.modules)")
    assert out.strip() == "False"
    out, _ = python("-c", "from gpude.stats import holm, rank_sum_scores; import sys; "
                          "print(callable(holm) and callable(rank_sum_scores), 'scipy.stats' in sys.modules)")
    assert out.split() == ["True", "True"]


def test_the_cache_keys_are_installed_when_numba_is_imported_after_gpude():
    out, _ = python("-c", "import gpude, numba.cuda; from numba.core import caching; "
                          "from numba.cuda.core import caching as cuda_caching; "
                          "print(caching.Cache._index_key._gpude, cuda_caching.Cache._index_key._gpude)")
    assert out.split() == ["True", "True"]


def test_cuda_kernel_cache_keys_are_the_same_in_every_process_and_differ_by_function():
    # the real compiler (no GPU needed to build the dispatchers and their cache keys)
    env = {"NUMBA_ENABLE_CUDASIM": "0"}
    script = str(HERE / "_cuda_cache_keys.py")
    first = json.loads(python(script, "F03", env=env)[0])
    assert json.loads(python(script, "F03", env=env)[0]) == first
    other = json.loads(python(script, "F05", env=env)[0])
    assert other["population"] != first["population"]  # a closure over another function's constants
    assert other["mutate_kernel"] == first["mutate_kernel"]  # the operators do not depend on it
    assert other["resident"] != first["resident"]  # de/resident fuses the function into its kernel


ARGS = ["--function", "Q01", "--dim", "10", "--popsize", "8", "--max-fes", "200"]


def test_warmup_fills_the_cache_and_the_run_after_it_compiles_nothing(tmp_path):
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "NUMBA_DEBUG_CACHE": "1"}
    out, err = python("-m", "gpude", "warmup", "--implementation", "sequential", *ARGS,
                      "--out", str(tmp_path / "w.json"), env=env)
    marker = json.loads((tmp_path / "w.json").read_text())
    assert marker["implementation"] == "sequential" and marker["function"] == "Q01"
    assert marker["numba_cache_dir"].startswith(str(tmp_path / "cache"))
    assert "data saved" in out and list((tmp_path / "cache").rglob("*.nbi"))
    out, err = python("-m", "gpude", "run", "--implementation", "sequential", *ARGS, "--trials", "2",
                      "--out-csv", str(tmp_path / "b.csv"), "--out-traces", str(tmp_path / "b.npz"), env=env)
    assert "data loaded" in out and "data saved" not in out, out
    assert "first trial at" in err


@pytest.mark.cudasim
def test_warmup_of_a_gpu_implementation_on_the_simulator_writes_its_marker(tmp_path):
    # nothing to compile on the simulator; on a GPU it compiles the kernels as a run would
    python("-m", "gpude", "warmup", "--implementation", "all_gpu", *ARGS, "--trials-per-launch", "2",
           "--out", str(tmp_path / "w.json"), env={"NUMBA_CACHE_DIR": str(tmp_path / "cache")})
    assert json.loads((tmp_path / "w.json").read_text())["implementation"] == "all_gpu"


def test_import_time_split_by_package():
    # benchmarks/startup.py: `python -X importtime`'s own times summed per top-level package
    from _benchmarks import load_benchmark

    bench = load_benchmark("startup")
    report = """import time: self [us] | cumulative | imported package
import time:       120 |        120 |   numpy._core._exceptions
import time:      1000 |       1120 | numpy
import time:       300 |        300 |     numba.core.config
import time:      2000 |       2300 |   numba
import time:        50 |         50 | gpude
something else on stderr
"""
    split = bench.import_split(report)
    assert list(split) == ["numba", "numpy", "gpude"]
    assert split["numba"] == pytest.approx(2300e-6) and split["numpy"] == pytest.approx(1120e-6)
    # a real child's report: the split adds up to no more than the imports' wall time
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", "import json"], capture_output=True,
                         text=True, check=True)
    assert "json" in bench.import_split(res.stderr)
