"""Shrink a wheel for the GPU host's capped transfer: drop its tests, type stubs and test-only
extension modules (numpy's _simd), keeping its RECORD consistent. The host's 64 MiB cap holds the
tracked tree (~48 MB) and the wheels (numpy's alone ~16 MB), so every MB counts.

    python3 scripts/slim_wheel.py .whl-slim/numpy-*.whl      # rewrites it in place
"""

from __future__ import annotations

import fnmatch
import os
import sys
import tempfile
import zipfile

# (not numpy.typing: pandas imports it; not f2py: small)
DROP = ("*/tests/*", "*.pyi", "numpy/_core/_simd.*", "numpy/_pyinstaller/*", "numpy/doc/*")


def slim(path: str) -> tuple[int, int]:
    before = os.path.getsize(path)
    with zipfile.ZipFile(path) as src:
        keep = [i for i in src.infolist() if not any(fnmatch.fnmatch(i.filename, p) for p in DROP)]
        dropped = {i.filename for i in src.infolist()} - {i.filename for i in keep}
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".whl")
        os.close(fd)
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
            for info in keep:
                data = src.read(info)
                if info.filename.endswith(".dist-info/RECORD"):
                    lines = data.decode().splitlines()
                    data = ("\n".join(ln for ln in lines if ln.split(",")[0] not in dropped) + "\n").encode()
                out.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED, compresslevel=9)
    os.replace(tmp, path)
    return before, os.path.getsize(path)


if __name__ == "__main__":
    for p in sys.argv[1:]:
        a, b = slim(p)
        print(f"{p}: {a / 1e6:.2f} -> {b / 1e6:.2f} MB")
