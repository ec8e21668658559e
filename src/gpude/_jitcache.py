"""Point numba's on-disk cache at a folder keyed by a hash of gpude's source.

numba invalidates a cached function only when its *own* file changes; a cached
caller keeps stale machine code of an edited callee in another module. Keying
the cache folder by the hash of every source file of the package makes any
edit start from a clean cache. A user's own NUMBA_CACHE_DIR is respected (and
then gets a per-source-hash subfolder as well).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def _source_hash() -> str:
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _configure() -> None:
    key = _source_hash()
    base = os.environ.get("NUMBA_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")), "gpude", "numba"
    )
    if Path(base).name != key:  # a child process inherits the already-keyed folder
        os.environ["NUMBA_CACHE_DIR"] = os.path.join(base, key)
    numba = sys.modules.get("numba")
    if numba is not None:  # imported before gpude: its config has read the old value
        numba.config.CACHE_DIR = os.environ["NUMBA_CACHE_DIR"]


_configure()
