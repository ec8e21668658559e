"""Point numba's on-disk cache at a folder keyed by a hash of gpude's source.

numba invalidates a cached function only when its *own* file changes; a cached
caller keeps stale machine code of an edited callee in another module. Keying
the cache folder by the hash of every source file of the package makes any
edit start from a clean cache. A user's own NUMBA_CACHE_DIR is respected (and
then gets a per-source-hash subfolder as well).

It also makes cached closures hit. numba keys a closure's cache entry by the
pickle of its cells, and a jitted function captured in a cell pickles with a
per-process uuid, so every function that calls a captured jitted function
(every DE, PSO, ... built by a factory) missed the cache and was compiled again
in every process (about 8 s per ``gpude run``). The key below replaces such a
cell by what determines its machine code: the captured function's code object,
options and, recursively, its own cells.
"""

from __future__ import annotations

import hashlib
import marshal
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


def _stable(obj, seen=frozenset()):
    """A process-independent stand-in for a closure cell (see the module docstring)."""
    py_func = getattr(obj, "py_func", None)
    if py_func is not None and hasattr(obj, "targetoptions"):  # a numba (or numba-cuda) dispatcher
        if id(obj) in seen:
            return ("recursion", py_func.__qualname__)
        cells = tuple(_stable(c.cell_contents, seen | {id(obj)}) for c in py_func.__closure__ or ())
        options = tuple(sorted((k, repr(v)) for k, v in obj.targetoptions.items()))
        return ("jitted", type(obj).__name__, py_func.__module__, py_func.__qualname__,
                marshal.dumps(py_func.__code__), options, cells)
    if type(obj) in (tuple, list):
        return (type(obj).__name__, tuple(_stable(x, seen) for x in obj))
    return obj


def _patch_cache_key() -> None:
    try:
        from numba.core import caching
        from numba.core.serialize import dumps
    except ImportError:  # another numba layout: keep its own key (correct, only slower)
        return
    if getattr(caching.Cache._index_key, "_gpude", False):
        return

    def _index_key(self, sig, codegen):
        codebytes = self._py_func.__code__.co_code
        closure = self._py_func.__closure__
        cvarbytes = dumps(tuple(_stable(c.cell_contents) for c in closure)) if closure is not None else b""
        return (sig, codegen.magic_tuple(), (hashlib.sha256(codebytes).hexdigest(),
                                             hashlib.sha256(cvarbytes).hexdigest()))

    _index_key._gpude = True
    caching.Cache._index_key = _index_key


_configure()
_patch_cache_key()
