"""benchmarks/block_variants.py (issue 67's prototype) on the simulator: de/block's kernel with pick's draws
made by four lanes, the parents loaded lazily and the selection by index makes de/block's run bit for bit (a
rotated function, one trial, two generations); the comparison sees a different run."""

import pytest
from _benchmarks import load_benchmark

bench = load_benchmark("block_variants")


@pytest.mark.cudasim
def test_the_cuts_together_make_de_block_s_run_and_another_seed_differs():
    base, cut = (bench.make(variant, "F01", 10, 8, 2, 1) for variant in ("base", "all"))
    want = base.run_batch([5])
    assert bench.same_run(cut.run_batch([5]), want) == ""
    assert cut.kernel is not base.kernel and cut.d_homes.shape == (2, 1, 8)  # the variant's own kernel ran
    assert bench.same_run(base.run_batch([6]), want).startswith("seed 6: best error")


def test_an_unknown_variant_is_named(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--variants", "base,fast"])
    assert "unknown variant(s) fast" in capsys.readouterr().err
