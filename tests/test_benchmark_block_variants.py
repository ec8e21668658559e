"""benchmarks/block_variants.py (issue 67's prototype) on the simulator: de/block's kernel before its cuts, and
with pick's draws by four lanes, the parents loaded lazily and the selection by index together, makes de/block's
run bit for bit (a rotated function, one trial, two generations); the comparison sees a different run."""

import pytest
from _benchmarks import load_benchmark

bench = load_benchmark("block_variants")


@pytest.mark.cudasim
def test_the_kernels_before_and_with_every_cut_make_de_block_s_run_and_another_seed_differs():
    block, before, cut = (bench.make(variant, "F01", 10, 8, 2, 1) for variant in ("block", "before", "all"))
    want = block.run_batch([5])
    assert bench.same_run(before.run_batch([5]), want) == ""
    assert bench.same_run(cut.run_batch([5]), want) == ""
    assert len({id(block.kernel), id(before.kernel), id(cut.kernel)}) == 3  # each its own kernel ran
    assert bench.same_run(block.run_batch([6]), want).startswith("seed 6: best error")


def test_an_unknown_variant_is_named(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--variants", "block,fast"])
    assert "unknown variant(s) fast" in capsys.readouterr().err
