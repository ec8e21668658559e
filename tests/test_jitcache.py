"""numba's on-disk cache for gpude's factory-built closures (src/gpude/core/jitcache.py): a second process
loads what the first compiled, and closures that differ anywhere down their captured functions never
share an entry."""

import os
import subprocess
import sys
import textwrap

MODULE = textwrap.dedent("""
    import sys
    import gpude  # noqa: F401  (installs the cache key)
    import numba

    def build(k):
        @numba.njit(cache=True)
        def inner(x):
            return x * k

        @numba.njit(cache=True)
        def outer(x):
            return inner(x) + 1.0
        return outer

    print(build(float(sys.argv[1]))(2.0))
""")


def run(tmp_path, k):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1")
    res = subprocess.run([sys.executable, str(tmp_path / "factory.py"), str(k)], capture_output=True,
                         text=True, env=env, cwd=tmp_path, timeout=120)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    saved = [line for line in lines if "data saved" in line and "outer" in line]
    return float(lines[-1]), saved


def test_a_closure_over_a_jitted_function_is_loaded_from_the_cache(tmp_path):
    (tmp_path / "factory.py").write_text(MODULE)
    value, saved = run(tmp_path, 3)
    assert value == 7.0 and saved  # compiled and stored by the first process
    value, saved = run(tmp_path, 3)
    assert value == 7.0 and not saved  # loaded by the second (numba's own key missed here every time)
    # a different constant in the *captured* function is a different entry, not a false hit
    value, saved = run(tmp_path, 5)
    assert value == 11.0 and saved
    value, saved = run(tmp_path, 3)
    assert value == 7.0 and not saved
