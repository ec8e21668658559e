"""benchmarks/gpu_checks.sh (the device queue's item 0): every test file and benchmark it names
exists, it refuses an unknown stage, and a stage's folder comes back packed as one archive."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_checks.sh"


def test_every_file_it_names_exists():
    text = SCRIPT.read_text()
    named = set(re.findall(r"\b((?:tests|benchmarks)/[\w/]+\.py)\b", text))
    assert len(named) >= 8
    assert sorted(p for p in named if not (ROOT / p).exists()) == []


def test_an_unknown_stage_is_refused(tmp_path):
    res = subprocess.run(["bash", str(SCRIPT), "nonsense"], cwd=ROOT, capture_output=True, text=True,
                         env={"OUT": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert res.returncode == 2 and "unknown stage nonsense" in res.stderr


def test_out_must_be_given():
    res = subprocess.run(["bash", str(SCRIPT), "tests"], cwd=ROOT, capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"})
    assert res.returncode != 0 and "OUT must name" in res.stderr


def test_the_header_and_the_refusal_list_every_stage_it_has():
    text = SCRIPT.read_text()
    start = text.index('case "$stage" in')
    body = text[start:text.index("\n  esac", start)]
    stages = set(re.findall(r"^    (\w+)\)", body, flags=re.M))
    header = text[text.index("# Stages:"):text.index("(see each below")]
    listed = set(re.findall(r"\w+", header.replace("# Stages:", "").replace("#", "")))
    refusal = re.search(r"unknown stage \$stage \(([^)]*)\)", text).group(1)
    assert len(stages) >= 20
    assert listed == stages and set(re.findall(r"\w+", refusal)) == stages


def test_every_csv_it_writes_keeps_every_digit():
    # pandas' default float format drops the 17th significant digit: a row re-read from such a file
    # differs from the same run's row elsewhere in its last bit (a float32 error written as float64)
    text = SCRIPT.read_text()
    writes = re.findall(r"\.to_csv\([^)]*\)", text)
    assert writes and all("float_format='%.17g'" in w for w in writes), writes
