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
options and, recursively, its own cells. The same key is installed in numba-cuda's cache
(``@cuda.jit(cache=True)`` kernels built by factories: the population kernels of
:mod:`gpude.functions.gpu`, the operator kernels of the GPU implementations), keeping numba-cuda's
own parts of it (its version, a kernel's launch configuration).

Nothing here imports numba: the keys are installed when numba's (or numba-cuda's) caching module
is first imported (an import hook), so that ``import gpude`` and commands that run no JIT code
(``gpude --help``, ``gpude list``) do not pay numba's 0.3-0.5 s import.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from pathlib import Path


def _source_hash() -> str:
    h = hashlib.sha256()
    root = Path(__file__).resolve().parents[1]  # the whole package, not this folder
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


def _stable_closure_bytes(py_func, dumps) -> bytes:
    closure = py_func.__closure__
    return dumps(tuple(_stable(c.cell_contents) for c in closure)) if closure is not None else b""


def _patch_cpu(caching) -> None:
    """numba's own cache (``@njit(cache=True)``)."""
    if getattr(caching.Cache._index_key, "_gpude", False):
        return
    from numba.core.serialize import dumps

    def _index_key(self, sig, codegen):
        codebytes = self._py_func.__code__.co_code
        cvarbytes = _stable_closure_bytes(self._py_func, dumps)
        return (sig, codegen.magic_tuple(), (hashlib.sha256(codebytes).hexdigest(),
                                             hashlib.sha256(cvarbytes).hexdigest()))

    _index_key._gpude = True
    caching.Cache._index_key = _index_key


def _patch_cuda(caching) -> None:
    """numba-cuda's cache (``@cuda.jit(cache=True)``): its key with the closure part made stable.
    A closure whose cells cannot be pickled is not cached (a warning, never an error), and a kernel
    that cannot be saved is only compiled, as without the cache."""
    Cache = caching.Cache
    if getattr(Cache._index_key, "_gpude", False):
        return
    import warnings

    try:
        import numba_cuda
        from numba.cuda.serialize import dumps
    except ImportError:  # another numba-cuda layout: keep its own key (correct, only slower)
        return
    version = numba_cuda.__version__

    def _index_key(self, sig, codegen):
        codebytes = self._py_func.__code__.co_code
        try:
            cvarbytes = _stable_closure_bytes(self._py_func, dumps)
        except Exception as exc:  # noqa: BLE001 - any pickling failure: no cache for this kernel
            warnings.warn(f"gpude: {self._name} is not cached ({type(exc).__name__}: {exc})", stacklevel=2)
            self.disable()
            cvarbytes = repr(id(self)).encode()
        return (sig, codegen.magic_tuple(), version,
                (hashlib.sha256(codebytes).hexdigest(), hashlib.sha256(cvarbytes).hexdigest()))

    _index_key._gpude = True
    Cache._index_key = _index_key
    save = Cache.save_overload

    def save_overload(self, sig, data):
        try:
            save(self, sig, data)
        except Exception as exc:  # noqa: BLE001 - the kernel is compiled and usable; only not stored
            warnings.warn(f"gpude: {self._name} could not be cached ({type(exc).__name__}: {exc})",
                          stacklevel=2)

    save_overload._gpude = True
    Cache.save_overload = save_overload


def _patch_cache_key() -> None:
    """Install the keys in numba's and numba-cuda's caching modules, now if they are imported, else
    when they are."""
    targets = {"numba.core.caching": _patch_cpu, "numba.cuda.core.caching": _patch_cuda}
    for name, patch in targets.items():
        if name in sys.modules:
            patch(sys.modules[name])
    if not all(name in sys.modules for name in targets) and not any(
            isinstance(f, _PatchOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _PatchOnImport(targets))


class _PatchOnImport:
    """A meta path finder that patches a module right after it is first executed."""

    def __init__(self, targets):
        self.targets = targets

    def find_spec(self, name, path=None, target=None):
        if name not in self.targets:
            return None
        for finder in sys.meta_path:  # the spec the other finders would give
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader, patch = spec.loader, self.targets[name]
        if not hasattr(loader, "exec_module"):
            return spec

        class _Loader:
            def create_module(self, spec):
                return loader.create_module(spec)

            def exec_module(self, module):
                loader.exec_module(module)
                try:
                    patch(module)
                except Exception:  # noqa: BLE001 - a numba layout we do not know: its own keys
                    pass

            def __getattr__(self, attr):
                return getattr(loader, attr)

        spec.loader = _Loader()
        return spec


_configure()
_patch_cache_key()
