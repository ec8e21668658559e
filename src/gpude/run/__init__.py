"""One run and a batch of runs: a batch's RunSpec and its arguments, one trial, a batch's trials, rows and
traces, in-process batches, verify, optimize."""
