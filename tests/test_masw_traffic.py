"""masw/gpu's DRAM traffic model (gpude.implementations.masw_gpu.traffic) on cases counted by hand."""

from gpude.implementations.masw_gpu.traffic import reads_permutation, traffic_rows

# one GA step of 2 children (pairs (0,1),(0,2),(3,1),(3,4): 5 distinct rows; parents {0,1,3}),
# one replacement; LS: 5 evaluations in 3 steps, 1 accepted
COUNTS = dict(ga_steps=1, children=2, dist_pairs=4, dist_rows=5, parent_rows=3, moves=1,
              ls_evaluations=5, ls_steps=3, ls_accepted=1, new_chains=0)


def test_traffic_model_by_hand():
    counts = COUNTS
    # distinct pair rows 5 + parents 3 + children written 2 + read back 2 + o once + a copy (read, write);
    # LS: x, b, o read and d written or read per evaluation, 5 rows per accepted step
    after = traffic_rows(counts, "after", has_perm=False)
    assert after == dict(ga=5 + 3 + 2 * 2 + 1 + 2, ls=4 * 5 + 5)
    before = traffic_rows(counts, "before", has_perm=False)
    # pairs 2 rows each; children: 2 parents + write, then read + o; per evaluation 6 rows
    # (+ reads x, b, writes d, candidate; the evaluation reads the candidate and o), per step 3
    # (b, d read, b written), per accepted step 2
    assert before == dict(ga=2 * 4 + 3 * 2 + 2 * 2 + 2, ls=6 * 5 + 3 * 3 + 2)
    assert traffic_rows(counts, "after", has_perm=True)["ls"] == 4.5 * 5 + 5
    # the children evaluated as they were made (ga_mode="fused") are not read back
    fused = traffic_rows({**counts, "fused_children": 2}, "after", has_perm=False)
    assert fused == dict(ga=after["ga"] - 2, ls=after["ls"])
    # fused_ga: the counters of a run that evaluated its children apart, modelled as the fused run
    assert traffic_rows(counts, "after-ga-fused", has_perm=False, fused_ga=True) == fused
    assert traffic_rows({**counts, "fused_children": 1}, "after", has_perm=False, fused_ga=True) == fused
    # a child that swaps stored rows with its slot moves no data (counter copies = 0); a run that
    # copied says so (copies = moves)
    swapped = traffic_rows({**counts, "copies": 0}, "after", has_perm=False)
    assert swapped == dict(ga=after["ga"] - 2, ls=after["ls"])
    assert traffic_rows({**counts, "copies": 1}, "after", has_perm=False) == after
    # every version of this tree is modelled as this tree (batches and variants once fell to the old
    # code's model), its local search as it ran
    for version in ("after-b10", "after-ga-fused", "after-u4"):
        assert traffic_rows(counts, version, has_perm=False) == after
    steps = traffic_rows(counts, "after", has_perm=False, ls_mode="steps")
    assert steps == dict(ga=after["ga"], ls=before["ls"])
    assert traffic_rows(counts, "after-steps", has_perm=False) == steps
    # ls_dual: one pass per step (3 here, not 5: x, b and o read, d written), the accepted step's update
    assert traffic_rows(counts, "after-dual", has_perm=False, dual=True) == dict(ga=after["ga"], ls=4 * 3 + 5)


def test_a_permutation_adds_half_a_row_to_each_read_of_o():
    after = traffic_rows(COUNTS, "after", has_perm=False)
    perm = traffic_rows(COUNTS, "after", has_perm=True)
    assert perm == dict(ga=after["ga"] + 0.5, ls=after["ls"] + 0.5 * 5)  # o: once per GA step, per evaluation
    before = traffic_rows(COUNTS, "before", has_perm=True)
    # the old code read o with each child (2) and each evaluation (5)
    assert before == dict(ga=2 * 4 + 3 * 2 + 2.5 * 2 + 2, ls=6.5 * 5 + 3 * 3 + 2)


def test_which_functions_read_a_permutation():
    # the shifted Lastra functions read o alone; CEC 2010's rotated head and Rosenbrock group permute
    assert not reads_permutation("L01", 1000) and not reads_permutation("L06", 1000)
    assert reads_permutation("C04", 1000) and reads_permutation("C13", 1000)
