"""benchmarks/resident_variants.py (issue 67's one-run prototype) on the simulator: de/resident's kernel before its
cuts, and with the trace a generation later and the function's data in shared memory, makes de/resident's run bit
for bit (a rotated function, one trial, two generations); the comparison sees a different run; data too large for
a block's static shared memory is refused with its size."""

import pytest
from _benchmarks import load_benchmark

bench = load_benchmark("resident_variants")


@pytest.mark.cudasim
def test_the_kernel_before_and_with_the_cuts_make_de_resident_s_run_and_another_seed_differs():
    resident, before, cut = (bench.make(variant, "F01", 10, 4, 2) for variant in ("resident", "copy", "fast"))
    want = resident.run_batch([5])
    assert bench.same_run(before.run_batch([5]), want) == ""
    assert bench.same_run(cut.run_batch([5]), want) == ""
    assert len({id(resident.kernel), id(before.kernel), id(cut.kernel)}) == 3  # each its own kernel ran
    assert bench.same_run(resident.run_batch([6]), want).startswith("seed 6: best error")


def test_data_beyond_static_shared_memory_is_refused_with_its_size():
    with pytest.raises(ValueError, match=r"need 205280 bytes of shared memory, above the 49152"):
        bench.build_variant_kernel(None, "float32", 128, 100, 100, *bench.VARIANTS["shared"],
                                   rot_shape=(5, 100, 100), shift_shape=(5, 100))


def test_an_unknown_variant_is_named(capsys):
    with pytest.raises(SystemExit):
        bench.main(["--variants", "resident,faster"])
    assert "unknown variant(s) faster" in capsys.readouterr().err
