#!/usr/bin/env bash
# Build a wheelhouse for an offline x86-64 GPU host running CPython 3.12, whose image already has
# CUDA, numba, pandas, scipy and matplotlib but whose numpy is too new for numba-cuda.
# Usage (from the project root, on a machine that reaches the package index):
#   scripts/wheelhouse.sh [DEST] [EXTRA_REQUIREMENT...]   # DEST defaults to .whl
# It also copies scripts/wheelhouse-activate.sh into DEST as activate.sh, so carrying DEST is enough.
# On the GPU host, from the project root:
#   source .whl/activate.sh .whl
# Pins known to work together on CUDA 13 with numba 0.68: numpy 2.4.6 + numba-cuda 0.30.4
# (numba-cuda 0.30.4 fails to import under numpy 2.5).
set -euo pipefail
dest=${1:-.whl}; shift || true
mkdir -p "$dest"
plat=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_24_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64
      --platform manylinux_2_5_x86_64 --platform any)
bin() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp "${plat[@]}" -d "$dest" "$@"; }
bin numpy==2.4.6 numba-cuda==0.30.4
# resolve snakemake (and any extra requirements) here, then fetch cp312 builds of the compiled ones
tmp=$(mktemp -d)
python3 -m pip wheel -q -w "$tmp" snakemake==9.27.1 "$@" >/dev/null 2>&1
# pulp (16 MB) is left out: snakemake falls back to its greedy scheduler without it (`--scheduler greedy`),
# and a small wheelhouse is easier to carry to an offline host
onhost='^(packaging|certifi|idna|urllib3|requests|jinja2|markupsafe|attrs|typing_extensions|tabulate|pyyaml|psutil|wrapt|charset_normalizer|numpy|scipy|pandas|matplotlib|numba|llvmlite|pulp)-'
for w in "$tmp"/*.whl; do
  b=$(basename "$w")
  echo "$b" | grep -qiE "$onhost" && continue
  case "$b" in
    *-none-any.whl) cp "$w" "$dest/" ;;
    *) name=${b%%-*}; ver=$(echo "$b" | cut -d- -f2); bin "$name==$ver" ;;
  esac
done
rm -rf "$tmp"
ls "$dest" | sed -E 's/-[0-9].*//' | sort | uniq -d | while read -r d; do echo "duplicate versions of $d in $dest" >&2; done
cp "$(dirname "$0")/wheelhouse-activate.sh" "$dest/activate.sh"
du -sh "$dest"
