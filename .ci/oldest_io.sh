#!/usr/bin/env bash
# CI's second step: the I/O tests (those marked `io`: they read or write results tables) again under
# the OLDEST pandas and numpy the project accepts (.ci/oldest.txt), where CI's main run has only the
# newest. pandas' default float parser changed between them (2.2.x and 3.0.x read about half of
# 17-digit floats 1 ulp off, 3.1 reads them exactly): gpude.core.io.read_csv must be exact under both.
#
# Its own virtual environment, .venv-ci (git-ignored), made by pip from pyproject.toml with the two
# pins as constraints: a set of packages pip itself chose to go together, as a user pinning the oldest
# pandas would get. (Overlaying only pandas and numpy on the main .venv, `pip install --no-deps
# --target DIR` and PYTHONPATH=DIR, measured 8 s to install where this takes ~50 s, but: it needs the
# main .venv, made only by the suite's line that must stay last; it needs pandas 2.2's own deps by
# hand (pytz, which pandas 3 dropped); and it mixes them with packages that declare newer ones, which
# `pip check` refuses (snakemake-executor-plugin-slurm 2.8 needs numpy>=2.4.5 and pandas>=2.3.3): an
# environment no one can install, that would break the day a compiled package needs its newer numpy.)
# From a clean clone with an empty pip cache on a 2-core machine: 1:18-1:30 in all (the install
# ~50 s, the 29 tests ~30 s with -n 3); the I/O tests fail there if read_csv falls back to
# pandas' default parser (9 of them did, where under the newest pandas only the 2 that simulate an
# inexact parser do).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv-ci
. .venv-ci/bin/activate
pip install -q --disable-pip-version-check -e . -c .ci/oldest.txt
# say what it runs under, and stop if pip did not install the pins
python - <<'PY'
import re
import sys
from pathlib import Path

import numpy
import pandas

from gpude.core.io import float_options

pins = dict(re.findall(r"^(\w+)==(\S+)", Path(".ci/oldest.txt").read_text(), re.M))
have = {"pandas": pandas.__version__, "numpy": numpy.__version__}
print(f"oldest-io: pandas {have['pandas']}, numpy {have['numpy']}, Python {sys.version.split()[0]}; "
      f"read_csv's float options: {float_options()}")
if have != pins:
    sys.exit(f"oldest-io: .ci/oldest.txt pins {pins}, but {have} is installed")
PY
python -m pytest -q -m io -n 3
