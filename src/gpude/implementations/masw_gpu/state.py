"""The slots of a trial's Solis-Wets state: a float64 row of ``st`` (shape (B, SLOTS)) per trial.

The host writes an application's start (the individual's error, its chain's rho and counts, the
budget); the steps mode's one-thread kernels (:mod:`.kernels`) or the fused application
(:mod:`.ls`) update it on the device; the host reads it back at the end. Each slot has one meaning
in both modes; a mode leaves the slots it does not use as the host wrote them.
"""

#: the individual's error under the local search, its chain's step size, successes and failures in a row
F_LS, RHO, SUCC, FAIL = 0, 1, 2, 3
#: evaluations the application has used, and its budget
USED, BUDGET = 4, 5
#: steps mode: the last step's outcome (1.0: '+' accepted, -1.0: '-' accepted, 0.0: failed)
OUTCOME = 6
#: fused mode: the steps the application made and accepted (written at its end, for the traffic count)
STEPS, ACCEPTED = 7, 8
#: the row's length
SLOTS = 9
