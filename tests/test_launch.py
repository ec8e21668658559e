"""Launch configuration: occupancy rules and Qin et al.'s members-per-block choice (pure Python)."""

import dataclasses
from types import SimpleNamespace

import pytest

from gpude.implementations.launch import (
    LIMITS,
    DeviceLimits,
    LaunchConfig,
    choose_launch,
    limits_from_device,
    next_power_of_two,
    occupancy,
)

SM90, SM86, SM75, SM61, SM35 = (LIMITS[n] for n in ("sm_90", "sm_86", "sm_75", "sm_61", "sm_35"))


def test_table_values():
    # Programming Guide, "Technical Specifications per Compute Capability".
    expect = {  # name: (threads/SM, blocks/SM, shared/SM KiB, opt-in/block KiB, alloc unit, reserved)
        "sm_35": (2048, 16, 48, 48, 256, 0), "sm_52": (2048, 32, 96, 48, 256, 0),
        "sm_61": (2048, 32, 96, 48, 256, 0), "sm_70": (2048, 32, 96, 96, 256, 0),
        "sm_75": (1024, 16, 64, 64, 256, 0), "sm_80": (2048, 32, 164, 163, 128, 1024),
        "sm_86": (1536, 16, 100, 99, 128, 1024), "sm_89": (1536, 24, 100, 99, 128, 1024),
        "sm_90": (2048, 32, 228, 227, 128, 1024),
    }
    for name, (thr, blk, smem, optin, unit, res) in expect.items():
        lim = LIMITS[name]
        got = (lim.max_threads_per_sm, lim.max_blocks_per_sm, lim.shared_per_sm,
               lim.max_shared_per_block_optin, lim.shared_alloc_unit, lim.reserved_shared_per_block)
        assert got == (thr, blk, smem * 1024, optin * 1024, unit, res), name
        assert (lim.max_threads_per_block, lim.registers_per_sm, lim.max_registers_per_thread,
                lim.register_alloc_unit, lim.max_shared_per_block) == (1024, 65536, 255, 256, 49152)
        assert lim.name == f"sm_{lim.compute_capability[0]}{lim.compute_capability[1]}"


# ---------------------------------------------------------------- occupancy()

def test_threads_limit_sm75():
    # 512 threads = 16 warps. threads: 1024 // 512 = 2; blocks: 16;
    # regs: 32*32 = 1024/warp, 16384 // 1024 = 16 warps per sub-partition x 4 = 64 warps // 16 = 4.
    # -> 2 blocks x 16 warps = 32 of 32 warps.
    assert occupancy(SM75, 512, 32, 0) == (2, 1.0, "threads")


def test_blocks_limit_sm86():
    # 32 threads = 1 warp. threads: 1536 // 32 = 48; blocks: 16; regs: 64 warps -> 64.
    # -> 16 blocks x 1 warp = 16 of 48 warps.
    assert occupancy(SM86, 32, 32, 0) == (16, pytest.approx(16 / 48), "blocks")


def test_registers_limit_sm90():
    # 128 regs: 4096/warp; 16384 // 4096 = 4 warps/sub-partition -> 16 warps;
    # 256 threads = 8 warps -> 2 blocks.
    assert occupancy(SM90, 256, 128, 0) == (2, 16 / 64, "registers")


def test_register_allocation_unit_rounding_sm90():
    # 33 regs: 33*32 = 1056 -> rounded up to 1280 per warp; 16384 // 1280 = 12 warps/sub -> 48 warps;
    # 256 threads = 8 warps -> 6 blocks (without rounding: 16384 // 1056 = 15 -> 60 warps -> 7 blocks).
    assert occupancy(SM90, 256, 33, 0) == (6, 48 / 64, "registers")


def test_register_subpartitions_sm90():
    # 192 regs: 6144/warp; 16384 // 6144 = 2 warps per sub-partition -> 8 warps/SM -> 8 one-warp blocks
    # (dividing the whole SM instead, 65536 // 6144 = 10, would overestimate: cuda_occupancy.h
    # floors per sub-partition).
    assert occupancy(SM90, 32, 192, 0) == (8, 8 / 64, "registers")


def test_registers_limit_sm35():
    # 1024 threads = 32 warps, 64 regs: 2048/warp; 16384 // 2048 = 8 per sub -> 32 warps -> 1 block
    # (threads would allow 2048 // 1024 = 2).
    assert occupancy(SM35, 1024, 64, 0) == (1, 0.5, "registers")


def test_too_many_registers_per_thread():
    assert occupancy(SM35, 32, 256, 0) == (0, 0.0, "registers")


def test_block_too_large():
    assert occupancy(SM90, 1025, 32, 0)[0] == 0


def test_shared_limit_with_reserved_bytes_sm90():
    # 23040 B + 1024 reserved = 24064 (already a multiple of 128); 233472 // 24064 = 9 blocks
    # (without the reserved KiB: 233472 // 23040 = 10). 128 threads = 4 warps: threads 16, regs 64//4 = 16.
    # -> 9 x 4 = 36 of 64 warps.
    assert occupancy(SM90, 128, 32, 23040) == (9, 36 / 64, "shared memory")


def test_shared_limit_with_allocation_unit_sm61():
    # 3100 B -> rounded to 3328 (13 x 256); 98304 // 3328 = 29 (unrounded: 31). 64 threads = 2 warps:
    # threads 2048 // 64 = 32, blocks 32, regs 64 // 2 = 32. -> 29 x 2 = 58 of 64 warps.
    assert occupancy(SM61, 64, 32, 3100) == (29, 58 / 64, "shared memory")


def test_shared_limit_sm35():
    # 20000 B -> 20224 (79 x 256); 49152 // 20224 = 2. 256 threads = 8 warps: threads 8, regs 64 // 8 = 8.
    assert occupancy(SM35, 256, 32, 20000) == (2, 16 / 64, "shared memory")


def test_static_vs_dynamic_shared_per_block_limit():
    assert occupancy(SM90, 128, 32, 49152)[0] == 4          # 50176 B each: 233472 // 50176 = 4
    assert occupancy(SM90, 128, 32, 49153)[0] == 0          # over the 48 KiB static limit
    assert occupancy(SM90, 128, 32, 49153, dynamic_shared=True)[0] == 4


# ---------------------------------------------------------------- choose_launch()

def test_d100_sm90_eight_members():
    # 128 threads/member, k <= 1024 // 128 = 8; 1 KiB shared per member.
    # Active warps for k: 4k warps/block x blocks, blocks = min(threads 16 // k, regs 64 // 4k,
    # shared 228 // (k+1), 32): k=1..8 -> 64, 64, 60, 64, 60, 48, 56, 64 -> highest 64, largest k = 8
    # (2 blocks/SM; threads tie registers and are named first).
    cfg = choose_launch(1000, 100, 128, 32, 1024, limits=SM90)
    assert cfg == LaunchConfig(members_per_block=8, threads_per_member=128, threads_per_block=1024,
                               blocks=125, blocks_per_sm=2, occupancy=1.0, limited_by="threads",
                               shared_bytes_per_block=8192, registers_per_thread=32)


def test_d10_many_members_per_block():
    # 16 threads/member: k <= 64; k = 64 -> 1024 threads, 2 blocks/SM, 100%.
    cfg = choose_launch(1000, 10, next_power_of_two(10), 32, 128, limits=SM90)
    assert (cfg.members_per_block, cfg.threads_per_block, cfg.blocks, cfg.occupancy) == (64, 1024, 16, 1.0)


def test_register_heavy_kernel():
    # 128 regs -> 16 warps/SM. 4k warps per block: k=1,2,4 -> 16 warps (25%); k=3 -> 12; k>=5 does not fit.
    cfg = choose_launch(1000, 100, 128, 128, 1024, limits=SM90)
    got = (cfg.members_per_block, cfg.blocks_per_sm, cfg.occupancy, cfg.limited_by)
    assert got == (4, 1, 0.25, "registers")


def test_shared_heavy_kernel_sm86():
    # 10000 B/member; sm_86: 102400 B/SM, 48 warps. Shared/block 10000k + 1024 rounded to 128:
    # k=1: 11136 -> 9 blocks x 4 warps = 36; k=2: 21120 -> 4 x 8 = 32; k=3: 31104 -> 3 x 12 = 36;
    # k=4: 41088 -> 2 x 16 = 32 (k=5 exceeds 48 KiB). Best 36/48, largest k = 3.
    cfg = choose_launch(1000, 100, 128, 32, 10000, limits=SM86)
    assert (cfg.members_per_block, cfg.blocks_per_sm, cfg.limited_by, cfg.shared_bytes_per_block) == \
        (3, 3, "shared memory", 30000)
    assert cfg.occupancy == pytest.approx(0.75)


def test_fixed_shared_bytes_count_once_per_block():
    cfg = choose_launch(100, 100, 128, 32, 1024, shared_bytes_fixed=4096, limits=SM90)
    assert cfg.shared_bytes_per_block == 4096 + cfg.members_per_block * 1024


def test_popsize_caps_members_per_block():
    # k <= popsize = 3: 48 threads = 2 warps, 32 blocks/SM -> 64 warps = 100%.
    cfg = choose_launch(3, 10, 16, 32, 128, limits=SM90)
    assert (cfg.members_per_block, cfg.blocks, cfg.occupancy) == (3, 1, 1.0)


def test_infeasible_shared_memory_raises():
    with pytest.raises(ValueError, match=r"50000 B of shared memory > 49152 B per block.*dynamic shared"):
        choose_launch(100, 100, 128, 32, 50000, limits=SM90)


def test_dynamic_shared_opt_in():
    # Opt-in 227 KiB: k <= 4. Warps: k=1: 233472 // 51072 = 4 blocks x 4 = 16; k=2: 2 x 8 = 16;
    # k=3: 1 x 12; k=4: 1 x 16 -> k = 4 at 25%.
    cfg = choose_launch(100, 100, 128, 32, 50000, limits=SM90, dynamic_shared=True)
    assert (cfg.members_per_block, cfg.blocks_per_sm, cfg.occupancy, cfg.limited_by) == \
        (4, 1, 0.25, "shared memory")


def test_infeasible_threads_and_registers_raise():
    with pytest.raises(ValueError, match="2048 threads > 1024"):
        choose_launch(100, 2000, 2048, 32, 0, limits=SM90)
    with pytest.raises(ValueError, match=r"300 registers.*at most 255 registers per thread"):
        choose_launch(100, 100, 128, 300, 0, limits=SM90)
    with pytest.raises(ValueError, match="popsize, dim and threads_per_member must be >= 1"):
        choose_launch(0, 100, 128, 32, 0)


def test_choice_depends_on_compute_capability():
    # D=100, 1 KiB/member, 32 regs. sm_90 (64 warps/SM): k=8, 2 blocks/SM.
    # sm_75 (32 warps/SM): k=8, 1 block/SM, 100%.
    # sm_86 (48 warps/SM): k=8 -> 1 x 32 warps (67%), k=7 -> 1 x 28, k=6 -> 2 x 24 = 48 (100%) -> k=6.
    sm90, sm75, sm86 = (choose_launch(1000, 100, 128, 32, 1024, limits=lim) for lim in (SM90, SM75, SM86))
    assert (sm90.members_per_block, sm90.blocks_per_sm) == (8, 2)
    assert (sm75.members_per_block, sm75.blocks_per_sm, sm75.occupancy) == (8, 1, 1.0)
    assert (sm86.members_per_block, sm86.blocks_per_sm, sm86.occupancy, sm86.blocks) == (6, 2, 1.0, 167)


def test_describe():
    cfg = choose_launch(1000, 100, 128, 32, 1024, limits=SM90)
    assert cfg.describe() == ("iDE launch: 8 members x 128 threads = 1024 threads/block, 125 blocks, "
                              "2 blocks/SM, occupancy 100% (limited by threads), 8192 B shared/block, "
                              "32 regs/thread")


def test_next_power_of_two():
    assert [next_power_of_two(n) for n in (1, 2, 3, 10, 30, 50, 64, 100)] == [1, 2, 4, 16, 32, 64, 64, 128]


# ---------------------------------------------------------------- limits_from_device()

def _device(cc, **attrs):
    return SimpleNamespace(compute_capability=cc, **attrs)


def test_limits_from_device_reads_attributes():
    dev = _device((8, 6), MAX_THREADS_PER_BLOCK=1024, MAX_THREADS_PER_MULTIPROCESSOR=1536,
                  MAX_BLOCKS_PER_MULTIPROCESSOR=16, MAX_REGISTERS_PER_MULTIPROCESSOR=65536,
                  MAX_SHARED_MEMORY_PER_MULTIPROCESSOR=102400, MAX_SHARED_MEMORY_PER_BLOCK=49152,
                  MULTIPROCESSOR_COUNT=84)
    assert limits_from_device(dev) == dataclasses.replace(SM86, sm_count=84)


def test_limits_from_device_overrides_and_fallbacks():
    # An old driver without MAX_BLOCKS_PER_MULTIPROCESSOR; values the device reports win over the table.
    dev = _device((9, 0), MAX_THREADS_PER_BLOCK=1024, MAX_THREADS_PER_MULTIPROCESSOR=2048,
                  MAX_REGISTERS_PER_MULTIPROCESSOR=65536, MAX_SHARED_MEMORY_PER_MULTIPROCESSOR=200 * 1024,
                  MAX_SHARED_MEMORY_PER_BLOCK=49152, MULTIPROCESSOR_COUNT=132)
    lim = limits_from_device(dev)
    assert (lim.max_blocks_per_sm, lim.shared_per_sm, lim.sm_count) == (32, 200 * 1024, 132)
    assert (lim.shared_alloc_unit, lim.reserved_shared_per_block, lim.max_shared_per_block_optin) == \
        (128, 1024, 227 * 1024)


def test_limits_from_device_unknown_cc_uses_nearest():
    # cc 8.7 (Orin): table entry sm_86 for what the device does not say, its own shared size.
    lim = limits_from_device(_device((8, 7), MAX_SHARED_MEMORY_PER_MULTIPROCESSOR=164 * 1024))
    got = (lim.name, lim.compute_capability, lim.max_threads_per_sm, lim.max_blocks_per_sm,
           lim.shared_per_sm)
    assert got == ("sm_87", (8, 7), 1536, 16, 164 * 1024)
    assert limits_from_device(_device((5, 0))).max_blocks_per_sm == 32     # 5.0 -> 5.2, not 3.5
    assert limits_from_device(_device((6, 0))).register_subpartitions == 2
    assert limits_from_device(_device((13, 0))).compute_capability == (13, 0)   # newer: newest table entry
    assert limits_from_device(_device((3, 0))).max_blocks_per_sm == 16


def test_limits_from_simulator_device():
    # The CUDA simulator's device reports cc 5.2 and no attributes: the table entry, unchanged.
    assert limits_from_device(_device((5, 2))) == LIMITS["sm_52"]
    assert isinstance(LIMITS["sm_52"], DeviceLimits)


def test_sm_count_spreads_small_populations_over_the_whole_gpu():
    # Qin's per-SM rule packs NP=250 members of D=100 eight to a block: 32 blocks, so on a
    # 132-SM H200 100 SMs would idle. Knowing the SM count, every SM gets a block first.
    per_member = (3 * 100 + 4 * 128) * 4
    qin = choose_launch(250, 100, 128, 64, per_member, limits=LIMITS["sm_90"])
    spread = choose_launch(250, 100, 128, 64, per_member, limits=LIMITS["sm_90"], sm_count=132)
    assert qin.members_per_block == 8 and qin.blocks == 32
    assert spread.members_per_block == 1 and spread.blocks == 250
    # D=10, NP=1000: the largest k that still gives >= 132 blocks (7 -> 143 blocks), at Qin's
    # best occupancy among those
    small = choose_launch(1000, 10, 16, 40, (30 + 64) * 8, limits=LIMITS["sm_90"], sm_count=132)
    assert small.members_per_block == 7 and small.blocks == 143
    # a population that fills every SM anyway: the same choice as Qin's rule
    big = [choose_launch(5000, 100, 128, 40, (300 + 512) * 8, limits=LIMITS["sm_90"], sm_count=s)
           for s in (0, 132)]
    assert big[0] == big[1]
