"""A stand-in for an outside optimiser speaking gpude's JSON-lines protocol: random search on the
sphere; one JSON object per progress line, the last one the result. It knows F01 only: any other
function ends with exit status 1 (a failed trial)."""
import argparse
import json
import random
import time

p = argparse.ArgumentParser()
p.add_argument("--function")
p.add_argument("--dim", type=int)
p.add_argument("--max-fes", type=int)
p.add_argument("--seed", type=int)
a = p.parse_args()
if a.function != "F01":
    raise SystemExit(f"toy_search: no function {a.function} here (F01 only)")
rng = random.Random(a.seed)
start, best = time.perf_counter(), float("inf")
for fes in range(1, a.max_fes + 1):
    best = min(best, sum(rng.uniform(-5.0, 5.0) ** 2 for _ in range(a.dim)))
    if fes % 500 == 0 or fes == a.max_fes:
        print(json.dumps({"fes": fes, "best_error": best, "time_s": time.perf_counter() - start}))
print("done")  # a line that is not the protocol's: ignored
