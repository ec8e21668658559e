"""Atomic file writes: a reader sees the old file or the complete new one, never a part."""

from __future__ import annotations

import errno
import os
import tempfile
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


def read_csv(path, **kwargs):
    """``pandas.read_csv`` that reads every float back as it was written (:func:`write_csv_atomic`'s
    17 digits). pandas 2's default float parser can be off in the last bit (on the H100 host a merged
    trials.csv's best error differed from its run's by 2 ulp: the same seed had made the same bits);
    pandas 3's is exact, and deprecates the option that fixes pandas 2's."""
    import pandas as pd

    if int(pd.__version__.split(".")[0]) < 3:
        kwargs.setdefault("float_precision", "round_trip")
    try:
        return pd.read_csv(path, **kwargs)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        from .errors import InvalidInputError

        raise InvalidInputError(f"{path}: not a readable CSV table ({' '.join(str(exc).split())})") from exc


def save_figure(fig, stem, dpi: int = 150, formats=("png", "pdf")) -> list[Path]:
    """Save a matplotlib figure as ``<stem>.png`` and ``<stem>.pdf``, each through a temporary
    file and a rename."""
    paths = []
    for ext in formats:
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
