"""pyproject.toml and environment.yml declare the same dependencies with the same bounds."""

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def normalise(requirement: str) -> tuple[str, str]:
    req = requirement.split("#")[0].replace(" ", "")
    name, spec = re.match(r"^([A-Za-z0-9_.\-]+)(.*)$", req).groups()
    return name.lower().replace("_", "-"), ",".join(sorted(spec.split(","))) if spec else ""


def test_pyproject_and_environment_yml_agree():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    from_pip = dict(normalise(r) for r in pyproject["project"]["dependencies"])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = dict(normalise(d) for d in env["dependencies"] if isinstance(d, str))
    conda.pop("pip")
    python = conda.pop("python")
    assert python == normalise("python" + pyproject["project"]["requires-python"])[1]
    assert conda == from_pip


def test_numpy_is_capped_below_2_5():
    # numba-cuda 0.30 fails to compile kernels under numpy 2.5 (np.row_stack removed)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    numpy = dict(normalise(r) for r in pyproject["project"]["dependencies"])["numpy"]
    assert "<2.5" in numpy.split(",")


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    command = re.search(r"## Running the tests\s+```\s*\n(.+?)\n```", readme, re.S).group(1).strip()
    ci_last_line = (ROOT / ".ci" / "run").read_text().strip().splitlines()[-1]
    assert ci_last_line == command


def test_ci_runs_the_io_tests_under_the_oldest_pandas_and_numpy_accepted():
    # .ci/oldest_io.sh installs .ci/oldest.txt's pins: each must be the lower bound pyproject.toml declares
    from packaging.requirements import Requirement
    from packaging.version import Version

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    lower = {}
    for requirement in map(Requirement, pyproject["project"]["dependencies"]):
        for s in requirement.specifier:
            if s.operator == ">=":
                lower[requirement.name] = Version(s.version)
    pins = dict(re.findall(r"^([A-Za-z0-9_.\-]+)==(\S+)$", (ROOT / ".ci" / "oldest.txt").read_text(), re.M))
    assert sorted(pins) == ["numpy", "pandas"]
    assert {name: Version(version) for name, version in pins.items()} == {name: lower[name] for name in pins}
    assert "bash .ci/oldest_io.sh" in (ROOT / ".ci" / "run").read_text().splitlines()
    assert "io" in [m.split(":")[0] for m in pyproject["tool"]["pytest"]["ini_options"]["markers"]]


def test_snakefile_parses_with_a_default_target():
    import subprocess
    import sys

    res = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--quiet", "--cores", "1"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr
