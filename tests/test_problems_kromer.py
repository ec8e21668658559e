"""Kromer et al.'s problems: instance data (fetch-data), the LOP and ETC evaluators against hand
computation, the proven optima and Min-Min, CPU and GPU (simulator)."""

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpude.core.errors import GpudeError
from gpude.problems import instances

ROOT = Path(__file__).resolve().parents[1]
# the instance files are not ours to commit: tests of real instances read them where `gpude fetch-data lolib`
# and `gpude fetch-data etc` put them (data/<set>, or $GPUDE_INSTANCE_DATA/<set> when that is set), and copy
# them from there (hand-made instances below and in tests/test_problem_runs.py run everywhere)
INSTANCES = instances.data_dir("lolib").parent
HAVE_INSTANCES = (all((INSTANCES / "lolib" / name).is_dir() for name in ("LOLIB", "N-LOLIB"))
                  and any((INSTANCES / "etc").glob("u_*")))
NEEDS = "needs the instance files: gpude fetch-data lolib; gpude fetch-data etc (or GPUDE_INSTANCE_DATA=DIR)"
needs_instances = pytest.mark.skipif(not HAVE_INSTANCES, reason=NEEDS)


def committed_files(kind, dest):
    """Copy data/<kind>'s committed files only: a checkout where `gpude fetch-data` ran also holds
    the instance files there, which would make every fetch below find them already intact."""
    shutil.copytree(ROOT / "data" / kind, dest, ignore=shutil.ignore_patterns("LOLIB", "N-LOLIB", "u_*", ".verified"))


@pytest.fixture(scope="module")
def data_root(tmp_path_factory):
    """A data root with the committed files of data/lolib and data/etc, filled by fetch-data --from."""
    if not HAVE_INSTANCES:
        pytest.skip(NEEDS)
    root = tmp_path_factory.mktemp("data")
    for kind in ("lolib", "etc"):
        committed_files(kind, root / kind)
    mp = pytest.MonkeyPatch()
    mp.setenv("GPUDE_INSTANCE_DATA", str(root))
    from gpude.problems import lop, scheduling

    lop.optima.cache_clear()
    scheduling.instances.cache_clear()
    for kind in ("lolib", "etc"):
        instances.fetch(kind, INSTANCES / kind)
    yield root
    mp.undo()
    lop.optima.cache_clear()
    scheduling.instances.cache_clear()


def test_fetch_from_an_offline_copy_verifies_and_is_idempotent(data_root, capsys):
    assert len(list((data_root / "lolib" / "LOLIB").iterdir())) == 49
    assert len(list((data_root / "lolib" / "N-LOLIB").iterdir())) == 50
    assert len(list(data_root.glob("etc/u_*"))) == 12
    assert instances.fetch("etc", INSTANCES / "etc") == []  # everything intact: nothing written


@needs_instances
def test_fetch_refuses_a_changed_file_and_writes_nothing(tmp_path, monkeypatch):
    committed_files("etc", tmp_path / "etc")
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(tmp_path))
    source = tmp_path / "copy"
    shutil.copytree(INSTANCES / "etc", source)
    (source / "u_s_lolo.0").write_text((source / "u_s_lolo.0").read_text().replace("1", "2", 1))
    with pytest.raises(GpudeError, match="u_s_lolo.0 has sha256 .* not the published file; nothing was written"):
        instances.fetch("etc", source)
    assert not list(tmp_path.glob("etc/u_*")) and not list((tmp_path / "etc").glob(".*staging*"))
    # a missing file names the command that fetches it
    with pytest.raises(GpudeError, match="gpude fetch-data etc"):
        instances.instance_file("etc", "u_c_hihi.0")
    # an altered file on disk: refused on use and by fetch, replaced with --force
    instances.fetch("etc", INSTANCES / "etc")
    target = tmp_path / "etc" / "u_c_hihi.0"
    target.write_bytes(target.read_bytes() + b"\n")
    with pytest.raises(GpudeError, match="altered.*--force"):
        instances.instance_file("etc", "u_c_hihi.0")
    with pytest.raises(GpudeError, match="--force"):
        instances.fetch("etc", INSTANCES / "etc")
    assert instances.fetch("etc", INSTANCES / "etc", force=True) == ["u_c_hihi.0"]
    assert instances.instance_file("etc", "u_c_hihi.0") == target


@needs_instances
def test_cli_fetch_data_lolib_from(tmp_path, monkeypatch, capsys):
    from gpude.cli import main

    committed_files("lolib", tmp_path / "lolib")
    monkeypatch.setenv("GPUDE_INSTANCE_DATA", str(tmp_path))
    assert main(["fetch-data", "lolib", "--from", str(INSTANCES / "lolib")]) == 0
    assert "99 file(s) written" in capsys.readouterr().out
    assert main(["fetch-data", "lolib", "--from", str(tmp_path / "nowhere")]) == 0  # all intact: nothing read
    committed_files("etc", tmp_path / "etc")
    assert main(["fetch-data", "etc", "--from", str(tmp_path / "nowhere")]) == 1
    assert "missing from the offline copy" in capsys.readouterr().err


# --- the linear ordering problem ---------------------------------------------------------------

C3 = np.array([[0, 5, 1], [2, 0, 7], [3, 4, 0]], dtype=np.int64)


def lop_values(X, device="cpu", parallel=False):
    """f of the rows of X on C3 through the evaluator kernels (whose error is optimum - f: optimum 0)."""
    from gpude.problems import lop

    X = np.asarray(X, float)
    if device == "cpu":
        out = np.empty(len(X))
        lop._cpu_kernel(parallel)(C3, X, out, 0)
        return -out
    from numba import cuda

    d = cuda.device_array(len(X), np.float64)
    gate = cuda.to_device(np.ones(1, np.int32))
    lop._gpu_kernel(3, np.float64)[len(X), 32](cuda.to_device(np.ascontiguousarray(C3.T)),
                                               cuda.to_device(X), 0, gate, d, 0)
    return -d.copy_to_host()


# keys -> ordering (stable argsort) -> f by hand: sum_{i<j} C[pi_i, pi_j]
HAND = [([0.1, 0.2, 0.3], 5 + 1 + 7),          # 0, 1, 2
        ([0.9, 0.5, 0.1], 4 + 3 + 2),          # 2, 1, 0
        ([0.5, 0.5, 0.1], 3 + 4 + 5),          # 2, then the tie 0 before 1
        ([0.2, 0.2, 0.2], 5 + 1 + 7)]          # all tied: index order


@pytest.mark.parametrize("device,parallel", [("cpu", False), ("cpu", True),
                                             pytest.param("gpu", False, marks=pytest.mark.cudasim)])
def test_lop_value_by_hand_with_ties(device, parallel):
    X = [k for k, _ in HAND]
    assert list(lop_values(X, device, parallel)) == [v for _, v in HAND]


def test_every_optimal_permutation_reaches_its_proven_optimum(data_root):
    from gpude.problems import get_lop, list_lop

    perms = pd.read_csv(data_root / "lolib" / "optimal_permutations.csv").set_index("file")
    names = list_lop()
    assert len(names) == 99 and len(list_lop(2)) == 49 and len(list_lop(3)) == 50
    rng = np.random.default_rng(1)
    for name in names:
        p = get_lop(name)
        perm = np.array(perms.loc[p.file, "permutation_0based_space_separated"].split(), dtype=int)
        keys = np.empty(p.dim)
        keys[perm] = np.sort(rng.uniform(0, 1, p.dim))  # keys whose ordering is perm
        assert (p.decode(keys) == perm).all()
        assert p.value(perm) == p.optimum_value == p.objective(keys)[0]
        assert p.evaluate(keys) == 0.0 and p.error_percent(keys)[0] == 0.0
        # a random ordering is worse, and its error % is Kromer's 100 (opt - f) / opt
        x = rng.uniform(0, 1, p.dim)
        f = p.value(p.decode(x))
        assert f < p.optimum_value
        assert p.error_percent(x)[0] == pytest.approx(100 * (p.optimum_value - f) / p.optimum_value)


@pytest.mark.cudasim
def test_lop_gpu_equals_cpu_on_a_real_instance(data_root):
    from gpude.problems import get_lop

    p = get_lop("N-tiw56n54")
    X = np.random.default_rng(2).uniform(0, 1, (2, p.dim))
    X[1, :10] = X[1, 0]  # ties
    assert (p.objective(X, "gpu") == p.objective(X, "cpu")).all()


def test_lop_tables_relate_by_the_sum_of_minima(data_root):
    """N-x is x normalised (c'_ij = c_ij - min(c_ij, c_ji)): f differs by the same constant for every ordering."""
    from gpude.problems import get_lop

    a, b = get_lop("be75eec"), get_lop("N-be75eec")
    X = np.random.default_rng(3).uniform(0, 1, (5, a.dim))
    diff = a.objective(X) - b.objective(X)
    assert (diff == diff[0]).all() and diff[0] == a.optimum_value - b.optimum_value


def test_lop_bad_input(data_root):
    from gpude.problems import get_lop

    with pytest.raises(GpudeError, match="unknown LOP instance 'be99'"):
        get_lop("be99")
    with pytest.raises(GpudeError, match=r"key vectors of shape \(n, 50\)"):
        get_lop("be75eec").evaluate(np.zeros((2, 49)))


# --- independent task scheduling ----------------------------------------------------------------

def test_min_min_reproduces_the_recorded_makespans(data_root):
    from gpude.problems import get_etc, list_etc, min_min

    assert len(list_etc()) == 12
    for name in list_etc():
        p = get_etc(name)
        assert p.etc.shape == (512, 16)
        machine, span = min_min(p.etc)
        assert span == pytest.approx(p.min_min_makespan, abs=0.05)
        keys = machine + 0.5
        assert p.report(keys)["makespan"] == pytest.approx(span)


def brute(etc, machine, lam, completion):
    m = etc.shape[1]
    loads = [sum(etc[t, i] for t in range(len(machine)) if machine[t] == i) for i in range(m)]
    if completion:
        flow = 0.0
        for i in range(m):
            times = sorted(etc[t, i] for t in range(len(machine)) if machine[t] == i)
            flow += float(np.sum(np.cumsum(times)))
    else:
        flow = sum(etc[t, machine[t]] for t in range(len(machine)))
    return lam * max(loads) + (1 - lam) * flow / m, max(loads), flow


@pytest.mark.parametrize("flowtime", ["eq14", "completion"])
def test_scheduling_fit_by_hand(data_root, flowtime):
    from gpude.problems import get_etc

    p = get_etc("TlMlCs", lam=0.3, flowtime=flowtime)
    rng = np.random.default_rng(4)
    X = rng.uniform(0, 16, (3, 512))
    X[0] = 0.0  # every task on machine 0
    X[1, :5] = 16.0  # the upper bound maps to the last machine
    fit, span, flow = p.parts(X)
    for r in range(3):
        want = brute(p.etc, p.decode(X[r]), 0.3, flowtime == "completion")
        assert (fit[r], span[r], flow[r]) == pytest.approx(want, rel=1e-12)
    assert span[0] == pytest.approx(p.etc[:, 0].sum())
    assert (p.decode(X[1])[:5] == 15).all()


@pytest.mark.cudasim
@pytest.mark.parametrize("flowtime", ["eq14", "completion"])
def test_scheduling_gpu_equals_cpu(data_root, flowtime):
    from gpude.problems import get_etc

    p = get_etc("ThMhCi", flowtime=flowtime)
    X = np.random.default_rng(5).uniform(0, 16, (2, 512))
    for a, b in zip(p.parts(X, "gpu"), p.parts(X, "cpu")):
        np.testing.assert_array_equal(a, b)  # the same sums in the same order: bit for bit


def test_scheduling_bad_input(data_root):
    from gpude.problems import get_etc

    with pytest.raises(GpudeError, match="unknown ETC instance"):
        get_etc("u_c_hihi")
    with pytest.raises(GpudeError, match="lambda must lie in"):
        get_etc("ThMhCc", lam=1.5)
    with pytest.raises(GpudeError, match="flowtime must be one of"):
        get_etc("ThMhCc", flowtime="mean")
    with pytest.raises(GpudeError, match="keys must be >= 0"):
        get_etc("ThMhCc").evaluate(-np.ones(512))
    with pytest.raises(GpudeError, match="keys must be finite"):
        get_etc("ThMhCc").parts(np.full(512, np.nan))
    # evaluate, like the functions', gives NaN for a point with NaN or inf
    assert np.isnan(get_etc("ThMhCc").evaluate(np.full(512, np.inf)))
