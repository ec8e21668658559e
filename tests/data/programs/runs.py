"""A stand-in for a program that makes several runs in one process and prints one line per run, as
the authors' CUDA programs do ("Function: f Best fitness: e Time: s"); --print makes it stop early."""
import sys

function, runs, printed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
for run in range(min(runs, printed)):
    print(f"Function: {function} Best fitness: {0.5 ** run:.6e} Time: {0.01 * (run + 1):.6f}")
