"""One run and a batch of runs: a run's command line, trials, rows and traces, verify, optimize."""
