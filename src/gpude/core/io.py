"""Atomic file writes: a reader sees the old file or the complete new one, never a part."""

from __future__ import annotations

import errno
import functools
import os
import tempfile
import warnings
from pathlib import Path

from .errors import GpudeError


class DiskFullError(GpudeError, OSError):
    """The disk (or a quota) filled up during a write; nothing was written."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path, data: str | bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the file a normal file's mode
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise DiskFullError(exc.errno, f"no space left on the device (or over quota) while writing {path} "
                                f"({len(data):,} {'bytes' if mode == 'wb' else 'characters'}): free space or point the "
                                "results elsewhere, then run again; nothing was written and the previous file, if "
                                "any, is intact") from exc
        raise
    return path


def write_csv_atomic(frame, path) -> Path:
    """``DataFrame.to_csv`` with float64 round-trip precision, written atomically."""
    return write_atomic(path, frame.to_csv(index=False, float_format="%.17g"))


# Floats that a decimal parser may get wrong in the last bit when written with 17 digits: a fixed
# sample of the magnitudes the results hold (pandas 2.2's and 3.0's default parsers read 494 of these
# 1,002 one ulp off; pandas 3.1's and Python's float() read them all exactly)
def _probe_values():
    import numpy as np

    rng = np.random.default_rng(5)
    return np.concatenate([rng.random(500), rng.lognormal(0, 20, 500), [0.5772087835620993, 0.1 + 0.2]])


def _reads_exactly(options: dict) -> bool:
    """Whether ``pandas.read_csv(**options)`` reads the probe's 17-digit floats back bit for bit."""
    import io as _io

    import numpy as np
    import pandas as pd

    values = _probe_values()
    text = "x\n" + "\n".join(f"{v:.17g}" for v in values) + "\n"
    with warnings.catch_warnings():  # pandas 3.1 deprecates float_precision (its default is exact)
        warnings.filterwarnings("ignore", message=".*float_precision")
        try:
            got = pd.read_csv(_io.StringIO(text), **options)["x"].to_numpy()
        except (TypeError, ValueError):  # an option this pandas version does not have
            return False
    return got.dtype == np.float64 and np.array_equal(got.view(np.int64), values.view(np.int64))


@functools.cache
def float_options() -> dict | None:
    """The ``read_csv`` options under which the installed pandas parses floats exactly, found by
    what its parser does (not by its version number): ``{}`` where the default parser is exact,
    ``{"float_precision": "round_trip"}`` where that one is, ``None`` where neither is (then
    :func:`read_csv` parses the float columns itself). Probed once per process (~1 ms)."""
    for options in ({}, {"float_precision": "round_trip"}):
        if _reads_exactly(options):
            return options
    return None


def _exact_floats(frame, path, kwargs):
    """``frame`` with its float columns parsed again from their text by Python's ``float`` (correctly
    rounded), for a pandas none of whose parsers is exact."""
    import pandas as pd

    floats = [c for c in frame.columns if frame[c].dtype.kind == "f"]
    if not floats:
        return frame
    if hasattr(path, "seek"):
        path.seek(0)
    text_kwargs = {k: v for k, v in kwargs.items() if k not in ("dtype", "converters", "float_precision")}
    raw = pd.read_csv(path, **text_kwargs, dtype={c: str for c in floats}, keep_default_na=False)
    frame = frame.copy()
    for c in floats:
        frame[c] = [_float_or_nan(x) for x in raw[c].astype(str)]
    return frame


def _float_or_nan(text: str) -> float:
    try:
        return float(text)
    except ValueError:  # an empty cell or one of pandas' missing-value marks (NA, N/A, NULL, ...)
        return float("nan")


def read_csv(path, **kwargs):
    """``pandas.read_csv`` that reads every float back as it was written (:func:`write_csv_atomic`'s
    17 digits), whatever pandas is installed: the parser is chosen by :func:`float_options` (pandas
    2.2 and 3.0 read half of a sample of floats 1 ulp off by default; on the H100 host a merged
    trials.csv's best error differed from its run's). A table that cannot be parsed raises
    :class:`~gpude.core.errors.InvalidInputError` naming the file."""
    import pandas as pd

    options = float_options()
    if options:
        kwargs = {**options, **kwargs}
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*float_precision")  # where pandas deprecates it
            frame = pd.read_csv(path, **kwargs)
        if options is None and isinstance(frame, pd.DataFrame):
            frame = _exact_floats(frame, path, kwargs)
        return frame
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        from .errors import InvalidInputError

        raise InvalidInputError(f"{path}: not a readable CSV table ({' '.join(str(exc).split())})") from exc


def replace_rows(path, new, key):
    """``new`` after the rows of the CSV at ``path`` (:func:`read_csv`; none where there is no file) whose
    ``key`` columns match none of ``new``'s rows: a later measurement of a key replaces the earlier one."""
    import pandas as pd

    if not Path(path).is_file():
        return new
    old = read_csv(path)
    keys = set(new[list(key)].astype(str).itertuples(index=False, name=None))
    keep = [k not in keys for k in old[list(key)].astype(str).itertuples(index=False, name=None)]
    return pd.concat([old.loc[keep], new], ignore_index=True)


#: the formats :func:`save_figure` writes unless told: PNG (what the REPORT shows); PDF on request
#: (``gpude paper --figure-formats png,pdf``, the workflow's ``figure_formats``), as drawing a figure
#: again for the PDF doubles a study's paper job
FIGURE_FORMATS = ["png"]
KNOWN_FIGURE_FORMATS = ("png", "pdf", "svg")


def set_figure_formats(formats) -> None:
    """Make every later :func:`save_figure` of this process write ``formats`` (e.g. ``["png", "pdf"]``)."""
    formats = [f.strip().lower() for f in formats if f.strip()]
    unknown = sorted(set(formats) - set(KNOWN_FIGURE_FORMATS))
    if not formats or unknown or "png" not in formats:
        from .errors import InvalidInputError

        raise InvalidInputError(f"figure formats {','.join(formats) or '(none)'}: give png and any of "
                                f"{', '.join(KNOWN_FIGURE_FORMATS[1:])} (comma-separated, e.g. png,pdf); the "
                                "REPORT shows the PNGs")
    FIGURE_FORMATS[:] = list(dict.fromkeys(formats))


def save_figure(fig, stem, dpi: int = 150, formats=None) -> list[Path]:
    """Save a matplotlib figure as ``<stem>.<format>`` for each of ``formats`` (default
    :data:`FIGURE_FORMATS`), each through a temporary file and a rename."""
    paths = []
    for ext in formats or FIGURE_FORMATS:
        path = Path(f"{stem}.{ext}")
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp.{ext}")  # keeps the extension: it picks the format
        try:
            fig.savefig(tmp, dpi=dpi)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        paths.append(path)
    return paths
