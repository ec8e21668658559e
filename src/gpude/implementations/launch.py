"""Launch configuration of the fused DE kernel (Qin et al., GECCO'12, sec. 4): blocks of ``k`` whole
members, ``k`` maximising SM occupancy as NVIDIA's ``cuda_occupancy.h`` computes it.  Pure Python.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..core.errors import InvalidInputError

K = 1024  # KiB


@dataclass(frozen=True)
class DeviceLimits:
    """Per-SM and per-block resource limits of one compute capability (all sizes in bytes)."""

    name: str
    compute_capability: tuple[int, int]
    max_threads_per_block: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    registers_per_sm: int
    max_registers_per_thread: int
    register_alloc_unit: int        # registers are allocated per warp in units of this many
    shared_per_sm: int              # usable by blocks on one SM (the maximum carveout)
    max_shared_per_block: int       # static limit, 48 KiB everywhere
    max_shared_per_block_optin: int  # dynamic shared memory after cudaFuncSetAttribute opt-in
    shared_alloc_unit: int          # granularity of a block's shared allocation
    reserved_shared_per_block: int  # taken by the driver per block (cc >= 8.0)
    warp_size: int = 32
    sm_count: int = 0
    register_subpartitions: int = 4  # registers are split over the SM's 4 schedulers (2 on cc 6.0)


def _cc(major, minor, thr_sm, blk_sm, smem_sm, optin, unit, reserved):
    return DeviceLimits(f"sm_{major}{minor}", (major, minor), 1024, thr_sm, blk_sm, 64 * K, 255, 256,
                        smem_sm, 48 * K, optin, unit, reserved)


# CUDA C Programming Guide, "Technical Specifications per Compute Capability";
# allocation units and reserved bytes from cuda_occupancy.h.
LIMITS: dict[str, DeviceLimits] = {lim.name: lim for lim in (
    #   cc     thr/SM blk/SM smem/SM  opt-in/block unit reserved
    _cc(3, 5, 2048, 16, 48 * K, 48 * K, 256, 0),
    _cc(5, 2, 2048, 32, 96 * K, 48 * K, 256, 0),
    _cc(6, 1, 2048, 32, 96 * K, 48 * K, 256, 0),
    _cc(7, 0, 2048, 32, 96 * K, 96 * K, 256, 0),
    _cc(7, 5, 1024, 16, 64 * K, 64 * K, 256, 0),
    _cc(8, 0, 2048, 32, 164 * K, 163 * K, 128, 1024),
    _cc(8, 6, 1536, 16, 100 * K, 99 * K, 128, 1024),
    _cc(8, 9, 1536, 24, 100 * K, 99 * K, 128, 1024),
    _cc(9, 0, 2048, 32, 228 * K, 227 * K, 128, 1024),
    _cc(10, 0, 2048, 32, 228 * K, 227 * K, 128, 1024),
    _cc(12, 0, 1536, 32, 100 * K, 99 * K, 128, 1024),
)}


def _nearest(cc: tuple[int, int]) -> DeviceLimits:
    """Table entry for ``cc``: exact, else nearest minor of the same major, else the newest older one."""
    known = sorted(LIMITS.values(), key=lambda lim: lim.compute_capability)
    same = [lim for lim in known if lim.compute_capability[0] == cc[0]]
    if same:  # e.g. 8.7 -> 8.6, 6.0 -> 6.1: same architecture family
        return min(same, key=lambda lim: (abs(lim.compute_capability[1] - cc[1]), lim.compute_capability))
    return max((lim for lim in known if lim.compute_capability < cc), default=known[0],
               key=lambda lim: lim.compute_capability)


# DeviceLimits field -> CUdevice_attribute name, as numba's Device spells it (no CU_DEVICE_ATTRIBUTE_).
_DEVICE_ATTRIBUTES = dict(
    max_threads_per_block="MAX_THREADS_PER_BLOCK", max_threads_per_sm="MAX_THREADS_PER_MULTIPROCESSOR",
    max_blocks_per_sm="MAX_BLOCKS_PER_MULTIPROCESSOR", registers_per_sm="MAX_REGISTERS_PER_MULTIPROCESSOR",
    shared_per_sm="MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
    max_shared_per_block="MAX_SHARED_MEMORY_PER_BLOCK",
    max_shared_per_block_optin="MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
    reserved_shared_per_block="RESERVED_SHARED_MEMORY_PER_BLOCK", warp_size="WARP_SIZE",
    sm_count="MULTIPROCESSOR_COUNT")


def limits_from_device(device) -> DeviceLimits:
    """Limits of a ``numba.cuda`` device: its own attributes, the table for the rest.

    ``device`` is a numba.cuda device, or anything with ``compute_capability`` and optionally
    the driver attribute names (``MAX_THREADS_PER_BLOCK``, ...); the CUDA simulator's device has
    none of them and gets the table entry.
    """
    cc = tuple(int(v) for v in device.compute_capability)
    base = _nearest(cc)

    def attr(name, default):
        try:  # numba raises AttributeError (or a driver error) for attributes an old driver lacks
            value = int(getattr(device, name))
        except Exception:
            return default
        return value if value > 0 else default

    values = {field: attr(name, getattr(base, field)) for field, name in _DEVICE_ATTRIBUTES.items()}
    if cc < (8, 0):  # only Ampere and later reserve shared memory per block
        values["reserved_shared_per_block"] = 0
    return dataclasses.replace(base, name=f"sm_{cc[0]}{cc[1]}", compute_capability=cc,
                               register_subpartitions=2 if cc == (6, 0) else base.register_subpartitions,
                               **values)


@dataclass(frozen=True)
class LaunchConfig:
    """A launch configuration chosen by :func:`choose_launch`."""

    members_per_block: int
    threads_per_member: int
    threads_per_block: int
    blocks: int                 # ceil(popsize / members_per_block)
    blocks_per_sm: int          # active blocks per SM
    occupancy: float            # active warps / maximum warps per SM
    limited_by: str             # "threads", "blocks", "registers" or "shared memory"
    shared_bytes_per_block: int
    registers_per_thread: int

    def describe(self, label: str = "iDE launch") -> str:
        """One human-readable line for logs and run metadata."""
        return (f"{label}: {self.members_per_block} members x {self.threads_per_member} threads = "
                f"{self.threads_per_block} threads/block, {self.blocks} blocks, "
                f"{self.blocks_per_sm} blocks/SM, occupancy {self.occupancy:.0%} "
                f"(limited by {self.limited_by}), {self.shared_bytes_per_block} B shared/block, "
                f"{self.registers_per_thread} regs/thread")


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def next_power_of_two(n: int) -> int:
    """Smallest power of two >= ``n`` (threads per member, so tree reductions halve evenly)."""
    return 1 << max(0, int(n) - 1).bit_length()


def occupancy(limits: DeviceLimits, threads_per_block: int, registers_per_thread: int,
              shared_bytes_per_block: int, dynamic_shared: bool = False) -> tuple[int, float, str]:
    """Active blocks per SM, occupancy and limiting factor, as ``cuda_occupancy.h`` computes them.

    Parameters
    ----------
    limits, threads_per_block, registers_per_thread, shared_bytes_per_block
    dynamic_shared : bool
        Use the opt-in per-block shared limit (dynamic shared memory), not the static 48 KiB.

    Returns
    -------
    (blocks_per_sm, occupancy, limited_by)
        ``blocks_per_sm`` is 0 when one block cannot run; ``occupancy`` is active / maximum warps
        per SM; ``limited_by`` is "threads", "blocks", "registers" or "shared memory", ties going
        in that order (a resource is named only when it lowers occupancy below the structural limits).
    """
    ws, lim = limits.warp_size, limits
    warps = -(-threads_per_block // ws)
    by_threads = (0 if threads_per_block > lim.max_threads_per_block else
                  lim.max_threads_per_sm // (warps * ws))
    # Registers go to whole warps in allocation units, and each of the SM's sub-partitions
    # holds only whole warps, so the floor is taken per sub-partition (not per SM).
    regs_per_warp = _round_up(registers_per_thread * ws, lim.register_alloc_unit)
    sub = lim.register_subpartitions
    by_regs = (0 if registers_per_thread > lim.max_registers_per_thread else lim.max_blocks_per_sm
               if regs_per_warp == 0 else (lim.registers_per_sm // sub // regs_per_warp) * sub // warps)
    # The driver adds its reserved bytes to each block before rounding to the allocation unit.
    per_block_limit = lim.max_shared_per_block_optin if dynamic_shared else lim.max_shared_per_block
    smem = _round_up(shared_bytes_per_block + lim.reserved_shared_per_block, lim.shared_alloc_unit)
    by_smem = (0 if shared_bytes_per_block > per_block_limit else
               lim.shared_per_sm // smem if smem else lim.max_blocks_per_sm)
    factors = {"threads": by_threads, "blocks": lim.max_blocks_per_sm, "registers": by_regs,
               "shared memory": by_smem}
    blocks = min(factors.values())
    limited_by = next(name for name, b in factors.items() if b == blocks)
    return blocks, blocks * warps * ws / lim.max_threads_per_sm, limited_by


def choose_launch(popsize: int, dim: int, threads_per_member: int, registers_per_thread: int,
                  shared_bytes_per_member: int, shared_bytes_fixed: int = 0,
                  limits: DeviceLimits = LIMITS["sm_90"], dynamic_shared: bool = False,
                  sm_count: int = 0) -> LaunchConfig:
    """Members per block maximising occupancy (Qin et al. 2012, sec. 4).

    Every ``k = 1 .. min(popsize, max_threads_per_block // threads_per_member)`` with
    ``shared_bytes_fixed + k * shared_bytes_per_member`` shared bytes per block is tried;
    the feasible ``k`` with the highest occupancy wins, the largest such ``k`` on ties
    (Qin: "the number of population members per block is maximized").

    Parameters
    ----------
    popsize, dim : int
        ``dim`` appears in messages only (with ``threads_per_member < dim`` threads loop).
    threads_per_member, registers_per_thread : int
        Normally ``next_power_of_two(dim)``; the compiled kernel's (``get_regs_per_thread()``).
    shared_bytes_per_member, shared_bytes_fixed : int
        Shared bytes a block needs per member, and independently of its member count.
    limits : DeviceLimits
        ``LIMITS["sm_90"]`` unless given; :func:`limits_from_device` for the GPU at hand.
    dynamic_shared : bool
        Opt-in per-block limit, for dynamic shared memory only (numba's ``cuda.shared.array``
        is static: 48 KiB).
    sm_count : int
        Multiprocessors of the device. When given, configurations are first ranked by the
        number of SMs that get a block, ``min(sm_count, blocks)``, and only then by Qin's
        per-SM occupancy: Qin et al. tuned GPUs of 2012 whose few SMs any population filled,
        but on a 132-SM GPU packing NP = 250 members eight to a block would leave 100 SMs
        idle. When every k fills all SMs, the rule is Qin's.

    Raises
    ------
    InvalidInputError (a ValueError)
        If no ``k`` gives a block that can run, naming the numbers and what to change.
    """
    given = (popsize, dim, threads_per_member,
             registers_per_thread, shared_bytes_per_member, shared_bytes_fixed)
    if min(given[:3]) < 1 or min(given[3:]) < 0:
        raise InvalidInputError(f"popsize, dim and threads_per_member must be >= 1, registers and shared "
                                f"bytes >= 0; got {given}")
    best, best_rank = None, (0, 0)
    for k in range(1, min(popsize, limits.max_threads_per_block // threads_per_member) + 1):
        threads, smem = k * threads_per_member, shared_bytes_fixed + k * shared_bytes_per_member
        blocks_per_sm, occ, why = occupancy(limits, threads, registers_per_thread, smem, dynamic_shared)
        blocks = -(-popsize // k)
        sms_used = min(sm_count, blocks) if sm_count > 0 else 0
        # integers, compared lexicographically: exact ties go to the larger k
        rank = (sms_used, blocks_per_sm * -(-threads // limits.warp_size))
        if blocks_per_sm >= 1 and rank >= best_rank:
            best, best_rank = LaunchConfig(k, threads_per_member, threads, blocks, blocks_per_sm,
                                           occ, why, smem, registers_per_thread), rank
    if best is None:
        raise InvalidInputError(_infeasible(limits, dim, threads_per_member, registers_per_thread,
                                            shared_bytes_fixed + shared_bytes_per_member, dynamic_shared))
    return best


def _infeasible(limits, dim, tpm, regs, smem, dynamic_shared) -> str:
    """Why even one member per block cannot run on ``limits``."""
    head = f"no launch configuration fits {limits.name} for dim={dim}: "
    if tpm > limits.max_threads_per_block:
        return (head + f"one member needs {tpm} threads > {limits.max_threads_per_block} per block; use "
                "fewer threads per member (each thread then handles several elements)")
    per_block = limits.max_shared_per_block_optin if dynamic_shared else limits.max_shared_per_block
    if smem > per_block:
        hint = ("" if dynamic_shared or limits.max_shared_per_block_optin <= per_block else
                f", or use dynamic shared memory (opt-in limit {limits.max_shared_per_block_optin} B)")
        return (head + f"a block of one member needs {smem} B of shared memory > {per_block} B per block "
                f"({'opt-in dynamic' if dynamic_shared else 'static'} limit); keep less per member "
                f"in shared memory (e.g. smaller dim or float32){hint}")
    return head + (f"a block of {tpm} threads x {regs} registers (and {smem} B shared memory) does not "
                   f"fit on one SM (at most {limits.max_registers_per_thread} registers per thread); use "
                   "fewer registers per thread (numba: max_registers)")
