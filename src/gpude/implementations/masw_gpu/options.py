"""``masw/gpu``'s options: checked, and their defaults for the function and D, in one place.

The defaults per kind of function (``ls_mode``, ``ls_unroll``, ``ls_min_blocks``, ``layout``) are the
fastest measured (:mod:`.ls`'s tables); every option changes how a run is made, never its result.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...core.errors import InvalidInputError, require_positive_int
from .kernels import THREADS

#: trials per launch at most (the Solis-Wets decisions: a thread per trial in one block)
MAX_TRIALS_PER_LAUNCH = 1024


@dataclass(frozen=True)
class MASWOptions:
    """How ``masw/gpu`` runs (see :class:`~gpude.implementations.masw_gpu.MASWGPU` for each)."""

    threads: int
    ls_mode: str
    ga_mode: str
    layout: str
    ls_unroll: int
    ls_min_blocks: int
    ls_regen: bool
    ls_dual: bool
    ls_share_next: bool
    trials_per_launch: int

    def recorded(self) -> dict:
        """The options a result records beside ``trials_per_launch`` (the fused kernel's only in
        the fused mode)."""
        options = {"ls_mode": self.ls_mode, "ga_mode": self.ga_mode, "layout": self.layout, "threads": self.threads}
        if self.ls_mode == "fused":
            options.update(ls_unroll=self.ls_unroll, ls_min_blocks=self.ls_min_blocks, ls_regen=self.ls_regen,
                           ls_dual=self.ls_dual, ls_share_next=self.ls_share_next)
        return options


def _mode(name: str, value: str, modes: tuple[str, str], able: bool, needs: str) -> str:
    """``value`` if it is one of ``modes`` and, for the first (the fused one), ``able``; else a clear error."""
    if value not in modes:
        raise InvalidInputError(f"{name} must be {modes[0]!r} or {modes[1]!r}, got {value!r}")
    if value == modes[0] and not able:
        raise InvalidInputError(f"{name}={modes[0]!r} needs {needs}: use {name}={modes[1]!r}")
    return value


def resolve_options(function, threads: int | None = None, ls_mode: str | None = None, trials_per_launch: int = 1,
                    ga_mode: str | None = None, ls_unroll: int | None = None, ls_min_blocks: int | None = None,
                    ls_regen: bool = False, layout: str | None = None, ls_dual: bool | None = None,
                    ls_share_next: bool = False) -> MASWOptions:
    """The options for ``function`` (its kind and D), the defaults filled in; a clear
    :class:`~gpude.core.errors.InvalidInputError` for a value out of range or a fused mode the function
    cannot have. ``ls_dual`` and ``ls_share_next`` read False where they change nothing."""
    from ...functions.streaming_gpu import LAYOUTS, position_layout
    from .ga import fusable as ga_fusable
    from .ls import UNROLLS, default_ls_mode, dual_supported, fused_options, kind

    require_positive_int("trials_per_launch", trials_per_launch)
    # the fused kernels compile the large-scale functions' terms in: those only
    fusable = getattr(function, "streaming", False) and hasattr(function, "code")
    best = fused_options(function.code, function.dim) if fusable else {"ls_unroll": 1, "ls_min_blocks": 0}
    ls_unroll = best["ls_unroll"] if ls_unroll is None else ls_unroll
    ls_min_blocks = best["ls_min_blocks"] if ls_min_blocks is None else ls_min_blocks
    if ls_unroll not in UNROLLS or isinstance(ls_unroll, bool):
        raise InvalidInputError(f"ls_unroll must be one of {', '.join(map(str, UNROLLS))} (coordinates the fused "
                                f"local search loads together), got {ls_unroll!r}")
    if isinstance(ls_min_blocks, bool) or not isinstance(ls_min_blocks, int) or not 0 <= ls_min_blocks <= 32:
        raise InvalidInputError(f"ls_min_blocks must be an integer in [0, 32] (resident blocks per SM asked of "
                                f"the fused local search's compiler; 0: none), got {ls_min_blocks!r}")
    ls_dual = True if ls_dual is None else ls_dual  # on wherever it applies
    for name, value, what in (("ls_regen", ls_regen, "draws its perturbation again instead of storing it"),
                              ("ls_dual", ls_dual, "sums a step's two candidates in one pass"),
                              ("ls_share_next", ls_share_next, "takes a neighbour's value from the thread "
                                                               "that computes it")):
        if not isinstance(value, bool):
            raise InvalidInputError(f"{name} must be True or False (the fused local search {what}), got {value!r}")
    if trials_per_launch > MAX_TRIALS_PER_LAUNCH:
        raise InvalidInputError(f"masw/gpu runs at most {MAX_TRIALS_PER_LAUNCH} trials per launch (a "
                                f"thread per trial in one block), got trials_per_launch={trials_per_launch}")
    if ls_mode is None:
        ls_mode = default_ls_mode(function.code, function.dim) if fusable else "steps"
    ls_mode = _mode("ls_mode", ls_mode, ("fused", "steps"), fusable,
                    f"a large-scale function (its terms are compiled into the local search's kernel); "
                    f"{function.fid} is evaluated through its own evaluator")
    # in effect only in the fused kernel, on a kind whose terms it can sum for both candidates at once
    ls_share_next = ls_share_next and ls_mode == "fused" and kind(function.code) == "next"
    ls_dual = ls_dual and ls_mode == "fused" and dual_supported(function.code, ls_share_next)
    ga_mode = _mode("ga_mode", "separate" if ga_mode is None else ga_mode, ("fused", "separate"),
                    fusable and ga_fusable(function.code),
                    f"a large-scale function other than Schwefel 1.2 (its terms are compiled into the "
                    f"crossover, which evaluates each child as it makes it); {function.fid} is not one")
    if threads is None:
        threads = min(THREADS, 1 << max(0, (function.dim - 1).bit_length()))
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1 or threads & (threads - 1) \
            or threads > 1024:
        raise InvalidInputError(f"threads must be a power of two in [1, 1024], got {threads!r}")
    has_perm = fusable and bool(function.evaluator_args(np.float64)[2])
    if layout is None:
        layout = "position" if has_perm and position_layout(function.code, has_perm) else "natural"
    if layout not in LAYOUTS:
        raise InvalidInputError(f"layout must be one of {', '.join(LAYOUTS)} (how a row holds a permuted "
                                f"function's coordinates), got {layout!r}")
    if layout == "position" and not has_perm:
        raise InvalidInputError(f"layout='position' keeps a permuted large-scale function's rows in position "
                                f"order; {function.fid} has no permutation: use layout='natural'")
    return MASWOptions(threads=threads, ls_mode=ls_mode, ga_mode=ga_mode, layout=layout, ls_unroll=ls_unroll,
                       ls_min_blocks=ls_min_blocks, ls_regen=ls_regen, ls_dual=ls_dual, ls_share_next=ls_share_next,
                       trials_per_launch=trials_per_launch)
