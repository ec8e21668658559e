"""Brest's jSO as an outside program (gpude.implementations.jso_brest): our driver's arguments and
protocol lines, the pin on their tree, the data filled from data/cec.

Their code is not in the repository (it lives in the git-ignored .authors/jso), so the driver is
built here against a small stand-in of their files (their de.h's interface, an LSHADE::run that
draws from rand() and writes outFile at the FEs their lshade.cc does): what is tested is our code.
Where .authors/jso holds their pinned tree, one more test builds and runs the real thing on a tiny
budget. The C++ tests need g++ (CI's environment.yml installs no compiler; .ci/run's Debian host has
one): without it they skip, saying so.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from gpude.implementations import jso_brest as jb

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("jso_brest")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None,
                               reason="g++ not on PATH: Brest's jSO and our driver are C++ (environment.yml "
                                      "installs no compiler)")

# A stand-in of their files: the interface driver.cpp uses, and a run that seeds nothing itself.
STAND_IN = {
    "de.h": """
#ifndef _HEADER_H_
#define _HEADER_H_
#include <cstdlib>
#include <iostream>
#include <iomanip>
#include <vector>
#include <cmath>
#include <fstream>
#include <string>
using namespace std;
typedef double Fitness;
extern int g_function_number, g_problem_size, g_pop_size, g_memory_size;
extern unsigned int g_max_num_evaluations;
extern double g_p_best_rate, g_arc_rate;
extern ofstream outFile;
void cec17_test_func(double *, double *, int, int, int);
class searchAlgorithm { public: virtual Fitness run() = 0; virtual ~searchAlgorithm() {} };
class LSHADE : public searchAlgorithm { public: virtual Fitness run(); };
#endif
""",
    "lshade.cc": """
#include "de.h"
Fitness LSHADE::run() {
  static const double fr[] = {0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0};
  double best = 1e6 + rand() % 1000;
  for (int nfes = g_pop_size + 1; nfes <= (int)g_max_num_evaluations; nfes++) {
    double f; double x[1] = {0.0};
    cec17_test_func(x, &f, 1, 1, g_function_number);
    best *= 0.999;
    if (g_function_number == 3) best = 5e-9;  // below the competition's 1e-8
    if (nfes % (g_problem_size * 100) == 0) {
      for (int k = 0; k < 14; k++) if (nfes == (int)(fr[k] * g_max_num_evaluations)) {
        outFile << best << (k == 13 ? "\\n" : " "); break; }
    }
  }
  return best;
}
""",
    "search_algorithm.cc": '#include "de.h"\n',
    "cec17_test_func.cc": '#include "de.h"\nvoid cec17_test_func(double *x, double *f, int, int, int) { *f = x[0]; }\n',
}


def stand_in_tree(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in STAND_IN.items():
        (folder / name).write_text(text)
    return folder


def fill_fake_data(build: Path, function: int, dim: int) -> None:
    (build / "input_data").mkdir(exist_ok=True)
    for name in jb.needed_files(function, dim):
        (build / "input_data" / name).write_text("0\n")


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    if shutil.which("g++") is None:
        pytest.skip("g++ not on PATH: Brest's jSO and our driver are C++ (environment.yml installs no compiler)")
    root = tmp_path_factory.mktemp("jso")
    build = root / "build"
    exe = jb.build(stand_in_tree(root / "src"), build, sha256="", echo=False)
    for f in (1, 3, 11):
        fill_fake_data(build, f, 10)
    return exe


def call(exe: Path, *args: str):
    done = subprocess.run([str(exe), *args], cwd=exe.parent, capture_output=True, text=True, timeout=60)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    return done.returncode, lines, done.stderr


def test_names_and_sizes():
    assert [jb.function_number(n) for n in ("cec17_f01", "CEC17_F30", "7", 12)] == [1, 30, 7, 12]
    for bad in ("F01", "cec17_f31", "cec14_f01", "0"):
        with pytest.raises(jb.InvalidInputError, match="CEC 2017"):
            jb.function_number(bad)
    assert [jb.jso_popsize(d) for d in (10, 30, 50, 100)] == [182, 466, 692, 1151]
    assert jb.needed_files(5, 30) == ["M_5_D30.txt", "shift_data_5.txt"]
    assert jb.needed_files(29, 10)[-1] == "shuffle_data_29_D10.txt"


@needs_gxx
def test_protocol_lines(driver):
    rc, lines, err = call(driver, "--function", "cec17_f01", "--dim", "10", "--seed", "5", "--max-fes", "10000",
                          "--runs", "2")
    assert rc == 0, err
    per_trial = [[p for p in lines if p["trial"] == t] for t in (0, 1)]
    for t, points in enumerate(per_trial):
        last = points[-1]
        assert last["seed"] == 5 + t and last["fes"] == 10000 and last["popsize"] == 182 and last["dim"] == 10
        # the FEs their chain writes at: a fraction of 1%, ..., 100% of MaxFES that is a multiple of 100 D
        assert [p["fes"] for p in points[:-1]] == list(range(1000, 10001, 1000))
        assert all(set(p) >= {"best_error", "fes", "time_s"} for p in points)
        assert points[-2]["best_error"] == last["best_error"]
        times = [p["time_s"] for p in points]
        assert times == sorted(times) and times[0] >= 0
    # the seed reaches their rand(): the same seed the same run, another seed another
    assert per_trial[0][-1]["best_error"] != per_trial[1][-1]["best_error"]
    rc, again, _ = call(driver, "--function", "1", "--dim", "10", "--seed", "6", "--max-fes", "10000")
    assert again[-1]["best_error"] == per_trial[1][-1]["best_error"]
    # the default budget is 10000 D: the 14 checkpoints of CEC's raw-data rule
    rc, lines, _ = call(driver, "--function", "cec17_f11", "--dim", "10", "--seed", "1")
    assert rc == 0 and lines[-1]["fes"] == 100000 and len(lines) == 15
    assert [p["fes"] for p in lines[:5]] == [1000, 2000, 3000, 5000, 10000]


@needs_gxx
def test_errors_below_1e8_are_zero(driver):
    rc, lines, err = call(driver, "--function", "cec17_f03", "--dim", "10", "--seed", "1", "--max-fes", "2000")
    assert rc == 0, err
    assert all(p["best_error"] == 0 for p in lines)


@needs_gxx
@pytest.mark.parametrize("args, says", [
    (["--function", "F01", "--dim", "10", "--seed", "1"], "cec17_f01..cec17_f30"),
    (["--function", "cec17_f31", "--dim", "10", "--seed", "1"], "cec17_f01..cec17_f30"),
    (["--function", "1", "--dim", "20", "--seed", "1"], "--dim must be 10, 30, 50 or 100"),
    (["--function", "1", "--dim", "10"], "--seed is required"),
    (["--function", "1", "--dim", "10", "--seed", "-3"], "bad value for --seed"),
    (["--function", "1", "--dim", "10", "--seed", "1", "--max-fes", "0"], "bad value for --max-fes"),
    (["--function", "1", "--dim", "10", "--seed", "1", "--trials", "2"], "unknown argument --trials"),
    (["--function", "1", "--dim", "10", "--seed"], "no value after --seed"),
    (["--function", "1", "--dim", "10", "--seed", "1", "--popsize", "100"], "182 at D = 10"),
])
def test_bad_arguments(driver, args, says):
    rc, lines, err = call(driver, *args)
    assert rc == 2 and not lines and says in err


@needs_gxx
def test_missing_data_file_named(driver):
    rc, lines, err = call(driver, "--function", "cec17_f05", "--dim", "30", "--seed", "1")
    assert rc == 1 and not lines and "input_data/M_5_D30.txt" in err


def test_pin_refuses_a_changed_tree(tmp_path):
    src = stand_in_tree(tmp_path / "src")
    pinned = jb.source_digest(src)
    assert jb.check_source(src, pinned) == pinned
    (src / "lshade.cc").write_text((src / "lshade.cc").read_text() + "// changed\n")
    with pytest.raises(jb.BrestError, match="not the pinned"):
        jb.check_source(src, pinned)
    with pytest.raises(jb.BrestError, match="not the pinned"):
        jb.build(src, tmp_path / "build", sha256=pinned)
    # the program spec's pin (config/programs/jso_brest.yaml) is the module's, and refuses this tree too
    import yaml

    from gpude.implementations.external import register_programs
    from gpude.run.trial import make_runner

    spec = yaml.safe_load((ROOT / "config/programs/jso_brest.yaml").read_text())["programs"]["brest"]
    assert spec["sha256"] == jb.SOURCE_SHA256 and spec["algorithm"] == "jso"
    register_programs({"brest_changed": {**spec, "source": str(src)}})

    class Problem:
        fid, dim, lower, upper = "cec17_f01", 10, -100.0, 100.0

    with pytest.raises(jb.InvalidInputError, match="not the .* the spec names"):
        make_runner("jso", "brest_changed", Problem(), 10, 182, 100000)


def _data_dir(tmp_path: Path, files: dict[str, bytes]) -> Path:
    import hashlib

    root = tmp_path / "cec"
    (root / "cec2017").mkdir(parents=True)
    sums = []
    for name, data in files.items():
        (root / "cec2017" / name).write_bytes(data)
        sums.append(f"{hashlib.sha256(data).hexdigest()}  cec2017/{name}\n")
    (root / "SHA256SUMS").write_text("".join(sums))
    return root


def test_fill_names_a_missing_file(tmp_path, monkeypatch):
    from gpude import cecdata

    m3 = cecdata.read_bytes("cec2017/M_3_D10.txt")
    # the official line endings (CRLF) are the same data: fscanf reads both
    monkeypatch.setenv("GPUDE_DATA_DIR", str(_data_dir(tmp_path, {
        "M_3_D10.txt": m3.replace(b"\n", b"\r\n"),
        "shift_data_3.txt": cecdata.read_bytes("cec2017/shift_data_3.txt")})))
    jb.fill_data(tmp_path / "build", [3], [10])
    assert (tmp_path / "build/input_data/M_3_D10.txt").read_bytes() == m3.replace(b"\n", b"\r\n")
    with pytest.raises(jb.BrestError, match=r"M_3_D30\.txt \(CEC 2017 F3 at D = 30\) is not among our checked"):
        jb.fill_data(tmp_path / "build", [3], [30])


def test_fill_refuses_a_file_unlike_theirs(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUDE_DATA_DIR", str(_data_dir(tmp_path, {"M_3_D10.txt": b"1 2 3\n",
                                                                   "shift_data_3.txt": b"0\n"})))
    with pytest.raises(jb.BrestError, match=r"M_3_D10\.txt differs from Brest's input_data/M_3_D10\.txt"):
        jb.fill_data(tmp_path / "build", [3], [10])


def test_fill_from_our_data():
    """data/cec/cec2017's files are their files (the ones we have: F3 at D = 10 here)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        jb.fill_data(Path(tmp), [3], [10])
        assert sorted(p.name for p in (Path(tmp) / "input_data").iterdir()) == ["M_3_D10.txt", "shift_data_3.txt"]


@needs_gxx
@pytest.mark.skipif(not (ROOT / ".authors/jso/lshade.cc").is_file(),
                    reason="Brest's tree is not in .authors/jso "
                           "(git-ignored: `python -m gpude.implementations.jso_brest pack`)")
def test_their_code_on_a_tiny_budget(tmp_path):
    try:
        jb.check_source(ROOT / ".authors/jso")
    except jb.BrestError as exc:
        pytest.skip(str(exc))
    exe = jb.build(ROOT / ".authors/jso", tmp_path, echo=False)
    jb.fill_data(tmp_path, [3], [10])
    rc, lines, err = call(exe, "--function", "cec17_f03", "--dim", "10", "--seed", "1", "--max-fes", "10000")
    assert rc == 0, err
    assert [p["fes"] for p in lines] == [*range(1000, 10001, 1000), 10000] and lines[-1]["best_error"] > 0
    rc, again, _ = call(exe, "--function", "cec17_f03", "--dim", "10", "--seed", "1", "--max-fes", "10000")
    assert again[-1]["best_error"] == lines[-1]["best_error"]
