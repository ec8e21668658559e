"""Registry of (algorithm, implementation) pairs.

Entries are import strings, so listing them never imports numba.cuda; a class is
imported when it is first used. Registering a competitor is one line, next to its
module (the table ``BUILTIN`` of ``gpude/implementations/__init__.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from ..core.errors import GpudeError


class UnknownImplementationError(GpudeError, KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Entry:
    """One registered implementation of one algorithm."""

    algorithm: str
    implementation: str
    target: str         # "package.module:Class", imported on first use
    device: str         # "cpu" or "gpu"
    description: str
    threads: str = "one"  # "all": the implementation uses every core (the workflow gives it the machine)

    @property
    def needs_gpu(self) -> bool:
        return self.device == "gpu"

    def load(self, check_device: bool = True) -> type:
        """Import the class; for a GPU entry, first check that a GPU (or the simulator) is usable
        (``check_device=False``: only to look at the class, e.g. its options, on any machine)."""
        if self.needs_gpu and check_device:
            from ..core.gpu_runtime import require_gpu

            require_gpu()
        module, _, name = self.target.partition(":")
        return getattr(import_module(module), name)


_REGISTRY: dict[tuple[str, str], Entry] = {}


def register(algorithm: str, implementation: str, target: str, device: str, description: str,
             threads: str = "one") -> Entry:
    """Add an entry; a second entry under the same (algorithm, implementation) is an error."""
    if device not in ("cpu", "gpu"):
        raise ValueError(f"device must be 'cpu' or 'gpu', got {device!r}")
    if threads not in ("one", "all"):
        raise ValueError(f"threads must be 'one' or 'all', got {threads!r}")
    key = (algorithm, implementation)
    existing = _REGISTRY.get(key)
    if existing is not None and existing.target == target:
        return existing  # the same plugin imported twice
    if key in _REGISTRY:
        raise RuntimeError(f"name collision: {algorithm}/{implementation} is already registered")
    _REGISTRY[key] = Entry(algorithm, implementation, target, device, description, threads)
    return _REGISTRY[key]


_BUILTIN_LOADED = False


def _ensure_loaded() -> None:
    """Register the built-in entries (the table of :mod:`gpude.implementations`) on first use."""
    global _BUILTIN_LOADED
    if _BUILTIN_LOADED:
        return
    from . import BUILTIN

    for args in BUILTIN:
        register(*args)
    _BUILTIN_LOADED = True


def entries() -> list[Entry]:
    """Every registered entry, in registration order."""
    _ensure_loaded()
    return list(_REGISTRY.values())


def get(algorithm: str, implementation: str) -> Entry:
    """The entry, or an error that lists what exists."""
    _ensure_loaded()
    algorithms = sorted({a for a, _ in _REGISTRY})
    if algorithm not in algorithms:
        raise UnknownImplementationError(
            f"unknown algorithm {algorithm!r}; registered: {', '.join(algorithms)}")
    if (algorithm, implementation) not in _REGISTRY:
        names = [i for a, i in _REGISTRY if a == algorithm]
        raise UnknownImplementationError(
            f"unknown implementation {implementation!r} of {algorithm!r}; registered: {', '.join(names)}")
    return _REGISTRY[(algorithm, implementation)]
