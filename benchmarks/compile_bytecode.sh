#!/usr/bin/env bash
# Compile the bytecode of what a GPU-host run imports: the carried wheels (~/.cache/gpude-site, installed
# --no-compile by .whl*/activate.sh), src and the host's site-packages. The GPU host writes no __pycache__
# on import, so without this every process compiled ~600 modules from source, 1.4 s of each start-up
# (results/logs/gpu_checks_nvidia-h100_c8d6b32/); once here (~10 s), later processes load it.
# Sourced or run from the repository root; does nothing without HOME.
[ -z "${HOME:-}" ] || python3 -m compileall -q -j 0 "$HOME/.cache/gpude-site" src \
  "$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" >/dev/null 2>&1
