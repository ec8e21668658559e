"""``masw/gpu``: Lastra, Molina & Benítez's GPU MA-SW-Chains (2015), for any D that fits the device.

As their Fig. 3: every loop over D runs on the GPU (initialisation, the NAM distances, BLX
crossover of ``offspring`` (20) children at once into a padding area after the population, their
evaluation, the Solis-Wets candidates and bias updates, the evaluations), with the function's
evaluator streaming over D (:mod:`gpude.functions.streaming_gpu`). The host keeps the scalars and
makes the scalar decisions with the same code as ``masw/sequential``: mothers, NAM candidates and
mutations (counter draws), fathers (from the distances), (mu + 20) replacement and the choice of
the individual to improve.

**Rows by reference.** Every row (a population slot ``b P + i``, a child) is read and written where
``where[row]`` says it is stored. An entering child and the slot it takes swap their stored rows
(``replace_batch``: two integers) instead of the child's D values being copied into the slot (a read
and a write of D values per replacement); the leaving member's row is where a later child is made.
The function's evaluator reads the children through the same map (``StreamingEvaluator``'s
``rows``); with an evaluator that has no row map (LOP, scheduling, CEC 2005 functions) the map stays
the identity and the children are copied.

Solis-Wets steps need no host round trip. On the large-scale functions (``ls_mode="fused"``, the
default there where it was measured faster) a whole application is one cooperative launch
(:mod:`.ls`): each candidate is generated inside its evaluation and
never stored, every block makes the step's decision from the blocks' sums after a grid barrier,
and a failed step writes nothing. Elsewhere (any problem's evaluator, ``ls_mode="steps"``) a
step's decisions (accept the '+' candidate, try the '-' one, the counts and rho) are made by
one-thread kernels on the device, and kernels whose work a decision cancels exit at once (a gate
flag); the host queues ``ceil(remaining / 2)`` steps, reads how many evaluations they used, and
repeats until the application's 500 are spent (about nine reads per application). Either way the
random numbers, the decisions and the results are those of ``masw/sequential`` for the same seed
(tested); the evaluations' last bits may differ (sums in another order).

**Trials per launch** (``trials_per_launch`` = B, :meth:`MASWGPU.run_batch`). At moderate D a
cycle is bound by launch latency and host round trips, not by its memory traffic, so B trials of
one (function, D) cell advance together, each with its own key:

* **layout**: one population array for all, rows ``[0, B P)`` the populations (trial b's individual
  i at ``b P + i``), rows ``[B P, B P + B offspring)`` the children (trial b's child c at
  ``B P + b offspring + c``), so every trial's children are one range of rows for the function's
  evaluator, unchanged; the biases ``(B P, D)``, row ``b P + i``; the steps mode's vectors
  ``(3 B, D)``: the trials' x, then their '+' candidates, then their '-' ones (each set one range of
  rows); the perturbations ``(B, D)``, the Solis-Wets states ``(B, SLOTS)`` (:mod:`.state`), the
  gates per trial;
* **shared launches**: a launch per GA kernel for all the trials (the trial from the grid: pairs,
  children and moves are flat over (trial, row), ``replace_batch`` a block per trial), one
  evaluation of all their children, and in the steps mode one launch per step kernel (the D-long
  ones with the trial in blockIdx.y, the decisions a thread per trial in one block, which also
  opens the evaluator's gate when any trial's is open) and one evaluation of all the candidates;
  the fused mode runs the trials' applications as one cooperative launch each, queued one after
  the other without a host read between them;
* **the host** draws every trial's GA step in one compiled call, and makes each trial's decisions
  (the individual to improve, a new chain's rho, keep or drop) in turn, after one read of the
  batch's state where a trial alone reads its own;
* **stopping**: the trials are in step (the same budget, the same units), and a trial that reaches
  its target stops being advanced (the kernels skip it) while the others go on; its trial row is
  that of its run alone (tested), its wall time its fair share of the batch's
  (:mod:`gpude.implementations.batched`, whose loop it runs); the trace's times are the batch's clock.

Device memory per trial: ``(popsize + offspring + popsize + 4) D`` values (population and padding,
a Solis-Wets bias per individual, the step's vectors) plus the function's data (once per batch);
:meth:`setup` says how much before the run and fails with the largest D (or, for a batch, the
largest ``trials_per_launch``) that fits when it does not.

The package: :mod:`.state` (the Solis-Wets state's slots), :mod:`.kernels` (the GA and steps-mode
kernels, the host's step planner), :mod:`.ls` (the fused Solis-Wets application), :mod:`.ga` (the
crossover that evaluates its children), :mod:`.buffers` (a batch's arrays), :mod:`.options` (the
options and their defaults), :mod:`.runner` (:class:`MASWGPU`) and :mod:`.traffic` (the DRAM traffic
model of a run, from the runner's counters).
"""

from .buffers import bytes_per_trial
from .kernels import build_gpu_masw, build_step_planner
from .options import MAX_TRIALS_PER_LAUNCH
from .runner import MASWGPU

__all__ = ["MASWGPU", "MAX_TRIALS_PER_LAUNCH", "build_gpu_masw", "build_step_planner", "bytes_per_trial"]
