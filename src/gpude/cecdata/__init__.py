"""The project's copy of the official CEC benchmark input data, verified on every load.

The 217 files under ``data/cec/`` (shift vectors, rotation matrices and shuffle permutations of the
whole CEC 2017 suite at D = 10, 30, 50, 100, of the CEC 2014 and CEC 2005 functions used here, and the
CEC 2005 Schwefel 2.6/2.13 matrices of Nashed et al.'s f7 and f17) are extracted from the ``opfunu==1.0.4``
wheel on PyPI by :mod:`gpude.cecdata.fetch`, whose data equal the official CEC C code's input data apart from line
endings. Each is stored gzip-compressed as ``<name>.gz`` (:func:`compress`: level 9, no time stamp
or file name in the header), and ``data/cec/SHA256SUMS`` records the SHA-256 of the *uncompressed*
bytes under the plain names, so it certifies the official (opfunu) bytes whatever the compressor.
Every access goes through :func:`verify` / :func:`read_bytes` / :func:`load_array`, which decompress
in memory and check those checksums, so a missing or altered file is reported instead of silently
producing wrong function values. Code that hands the files to other programs writes
:func:`read_bytes` (the plain bytes), never copies the stored ``.gz``. A plain ``<name>`` is read
where there is no ``<name>.gz`` (a folder someone decompressed, a scratch folder of a test), checked
the same way.

Examples
--------
>>> from gpude import cecdata
>>> cecdata.load_array("cec2017/M_3_D10.txt").shape
(10, 10)
"""

from __future__ import annotations

import gzip
import hashlib
import os
import threading
import zlib
from pathlib import Path

import numpy as np

__all__ = [
    "CECDataError",
    "DATA_DIR",
    "REQUIRED_FILES",
    "SUMS_NAME",
    "data_dir",
    "verify",
    "verify_all",
    "read_bytes",
    "load_array",
    "stored_path",
    "read_stored",
    "compress",
    "GZ_SUFFIX",
    "parse_numbers",
    "parse_sums",
    "format_sums",
    "sha256_file",
]

#: Environment variable that overrides the data folder (tests point it at a scratch copy).
ENV_VAR = "GPUDE_DATA_DIR"
#: Name of the checksum file inside the data folder.
SUMS_NAME = "SHA256SUMS"
#: Suffix of the stored (compressed) data files: ``cec2017/M_3_D10.txt`` is ``cec2017/M_3_D10.txt.gz``.
GZ_SUFFIX = ".gz"

# src/gpude/cecdata/__init__.py -> parents[3] is the repository root.
_REPO_ROOT = Path(__file__).resolve().parents[3]
_DEFAULT_DIR = _REPO_ROOT / "data" / "cec"

_RESTORE_HINT = (
    "Restore the data with `gpude fetch-data` (or `python -m gpude.cecdata.fetch`), "
    "which re-extracts it from the pinned opfunu 1.0.4 wheel."
)


class CECDataError(RuntimeError):
    """A CEC data file is missing, altered, unlisted or unreadable.

    The message names the file by its full path and says how to restore the data.
    """


def data_dir() -> Path:
    """Return the data folder, resolving ``GPUDE_DATA_DIR`` at call time.

    Returns
    -------
    pathlib.Path
        ``$GPUDE_DATA_DIR`` if set and non-empty, else ``<repo root>/data/cec``.
    """
    env = os.environ.get(ENV_VAR)
    return Path(env).expanduser() if env else _DEFAULT_DIR


#: The data folder as seen at import time; use :func:`data_dir` where the environment may change.
DATA_DIR: Path = data_dir()


#: The CEC 2017 functions with official data: F1, F3..F30 (the organisers excluded F2).
CEC2017_FUNCTIONS: tuple[int, ...] = (1, *range(3, 31))
#: Those that read a shuffle file: the hybrids F11..F20 and the compositions of hybrids F29, F30.
CEC2017_SHUFFLED: tuple[int, ...] = (*range(11, 21), 29, 30)


def _required_files() -> tuple[str, ...]:
    fns14 = (18, 22)
    dims = (10, 30, 50, 100)
    # The whole CEC 2017 suite (cec17_f01 .. cec17_f30); Janssen et al.'s F01..F10 read a subset.
    files = [f"cec2017/shift_data_{n}.txt" for n in CEC2017_FUNCTIONS]
    files += [f"cec2017/M_{n}_D{d}.txt" for n in CEC2017_FUNCTIONS for d in dims]
    files += [f"cec2017/shuffle_data_{n}_D{d}.txt" for n in CEC2017_SHUFFLED for d in dims]
    files += [f"cec2014/shift_data_{n}.txt" for n in fns14]
    files += [f"cec2014/M_{n}_D{d}.txt" for n in fns14 for d in dims]
    files += [f"cec2014/shuffle_data_{n}_D{d}.txt" for n in fns14 for d in dims]
    files += [f"cec2005/{f}_func_data.txt" for f in ("sphere", "rosenbrock", "griewank", "rastrigin")]
    # Nashed et al. f7 (Schwefel 2.6 = CEC'05 F5) and f17 (Schwefel 2.13 = CEC'05 F12).
    files += [f"cec2005/schwefel_{n}_data.txt" for n in ("206", "213")]
    return tuple(sorted(files))


#: The 217 data files (paths relative to the data folder, ``/``-separated), sorted.
REQUIRED_FILES: tuple[str, ...] = _required_files()


# ---------------------------------------------------------------------------------------------
# SHA256SUMS format (shared with the writer in gpude.cecdata.fetch)
# ---------------------------------------------------------------------------------------------


def format_sums(digests: dict[str, str]) -> str:
    """Render checksums in ``sha256sum`` style, sorted by path.

    Parameters
    ----------
    digests : dict of str to str
        Relative path -> lowercase hex sha256.

    Returns
    -------
    str
        One ``<sha256>  <relpath>`` line per file, ``\\n``-terminated.
    """
    return "".join(f"{digests[p]}  {p}\n" for p in sorted(digests))


def parse_sums(text: str, source: str | os.PathLike = SUMS_NAME) -> dict[str, str]:
    """Parse ``sha256sum``-style lines into ``{relpath: sha256}``.

    Parameters
    ----------
    text : str
        Content of a SHA256SUMS file. Blank lines are ignored; a ``*`` binary marker is accepted.
    source : str or path-like
        Where the text came from, for error messages.

    Returns
    -------
    dict of str to str

    Raises
    ------
    CECDataError
        On a malformed line or a path listed twice.
    """
    sums: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        digest, sep, rel = line.partition(" ")
        rel = rel[1:] if rel[:1] in (" ", "*") else rel
        digest = digest.lower()
        if not sep or not rel or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise CECDataError(
                f"{source}: line {lineno} is not '<sha256>  <path>': {line!r}. {_RESTORE_HINT}"
            )
        if rel in sums:
            raise CECDataError(f"{source}: {rel} is listed twice (line {lineno}). {_RESTORE_HINT}")
        sums[rel] = digest
    return sums


def compress(data: bytes) -> bytes:
    """The stored form of a data file: ``gzip.compress(data, compresslevel=9, mtime=0)``.

    Deterministic for one zlib (no time stamp, no file name in the header); another zlib build may
    give other compressed bytes for the same data, which is harmless: the checksums are of the
    uncompressed bytes.
    """
    return gzip.compress(data, compresslevel=9, mtime=0)


def stored_path(path: str | os.PathLike) -> Path:
    """The file that holds a data file's bytes: ``<path>.gz`` if it exists, else ``<path>`` itself.

    Parameters
    ----------
    path : str or path-like
        The plain (official) name, e.g. ``data_dir() / "cec2017/M_3_D10.txt"``.

    Returns
    -------
    pathlib.Path
        ``<path>.gz`` where that exists or where neither exists (the canonical stored name, so a
        "missing" message names it), else the plain ``<path>``.
    """
    path = Path(path)
    gz = path.with_name(path.name + GZ_SUFFIX)
    return path if (not gz.exists() and path.exists()) else gz


def _decode(path: Path, raw: bytes) -> bytes:
    if path.name.endswith(GZ_SUFFIX):
        try:
            return gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise CECDataError(
                f"CEC data file {path} cannot be decompressed ({exc}). {_RESTORE_HINT}"
            ) from exc
    return raw


def read_stored(path: str | os.PathLike) -> bytes:
    """The plain bytes of a data file in any folder, unverified: ``<path>.gz`` decompressed, else
    ``<path>``'s bytes (see :func:`stored_path`). For folders outside the checked data folder
    (e.g. one given on a command line); use :func:`read_bytes` for the data folder itself.

    Raises
    ------
    CECDataError
        If neither file exists or it cannot be read or decompressed; the message names the file.
    """
    stored = stored_path(path)
    if not stored.is_file():
        raise CECDataError(f"CEC data file is missing: {stored} (nor is there an uncompressed "
                           f"{Path(path).name}). {_RESTORE_HINT}")
    return _decode(stored, _read_bytes(stored))


def sha256_file(path: str | os.PathLike) -> str:
    """Return the lowercase hex sha256 of a file, read in 1 MiB chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# Verification with per-process caches
# ---------------------------------------------------------------------------------------------

# Caches are keyed by the file's stat signature, so an edited or replaced file is re-read while an
# unchanged one is hashed once per process. ctime and inode are included besides the (path,
# mtime_ns, size) triple because mtime can be reset by tools such as `touch -r` or `cp -p`.
_lock = threading.Lock()
_hash_cache: dict[tuple, str] = {}
_sums_cache: dict[str, tuple[tuple, dict[str, str]]] = {}
_array_cache: dict[str, tuple[tuple, np.ndarray]] = {}


def _signature(path: Path, st: os.stat_result) -> tuple:
    return (str(path), st.st_mtime_ns, st.st_size, st.st_ctime_ns, st.st_ino)


def _stat(path: Path, what: str) -> os.stat_result:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise CECDataError(f"CEC data {what} is missing: {path}. {_RESTORE_HINT}") from None
    except OSError as exc:
        raise CECDataError(f"CEC data {what} cannot be read: {path} ({exc}). {_RESTORE_HINT}") from exc
    if not path.is_file():
        raise CECDataError(f"CEC data {what} is not a regular file: {path}. {_RESTORE_HINT}")
    return st


def _load_sums(root: Path) -> dict[str, str]:
    path = root / SUMS_NAME
    sig = _signature(path, _stat(path, "checksum list"))
    with _lock:
        hit = _sums_cache.get(str(path))
    if hit is not None and hit[0] == sig:
        return hit[1]
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CECDataError(
            f"CEC data checksum list cannot be read: {path} ({exc}). {_RESTORE_HINT}"
        ) from exc
    sums = parse_sums(text, path)
    with _lock:
        _sums_cache[str(path)] = (sig, sums)
    return sums


def _normalise(relpath: str | os.PathLike) -> str:
    # Accept OS-native separators but look files up by the canonical '/'-form used in SHA256SUMS.
    rel = Path(relpath).as_posix()
    if Path(rel).is_absolute() or ".." in Path(rel).parts:
        raise CECDataError(f"CEC data path must be relative to the data folder: {relpath!r}")
    return rel


def _locate(relpath: str | os.PathLike) -> tuple[Path, tuple, str]:
    """Return ``(stored path, stat signature, recorded sha256)`` of a listed, existing file."""
    root = data_dir()
    rel = _normalise(relpath)
    sums = _load_sums(root)
    path = root / rel
    if rel not in sums:
        raise CECDataError(
            f"CEC data file {path} is not listed in {root / SUMS_NAME}, so it cannot be verified. "
            f"{_RESTORE_HINT}"
        )
    stored = stored_path(path)
    return stored, _signature(stored, _stat(stored, "file")), sums[rel]


def _check_digest(path: Path, sig: tuple, digest: str, expected: str) -> None:
    """Remember the digest of this file version and raise if it is not the recorded one."""
    with _lock:
        _hash_cache[sig] = digest
    if digest != expected:
        raise CECDataError(
            f"CEC data file {path} was altered: the sha256 of its "
            f"{'uncompressed ' if path.name.endswith(GZ_SUFFIX) else ''}bytes is {digest}, but "
            f"SHA256SUMS records {expected}. {_RESTORE_HINT}"
        )


def _read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise CECDataError(f"CEC data file cannot be read: {path} ({exc}). {_RESTORE_HINT}") from exc


def verify(relpath: str | os.PathLike) -> Path:
    """Check that a data file exists and matches its recorded sha256.

    Parameters
    ----------
    relpath : str or path-like
        Path relative to the data folder, e.g. ``"cec2017/M_3_D10.txt"``.

    Returns
    -------
    pathlib.Path
        The full path of the stored file (``<relpath>.gz``, or a plain ``<relpath>`` where there is
        no ``.gz``). Its bytes are the compressed ones: read the data with :func:`read_bytes`.

    Raises
    ------
    CECDataError
        If the file or ``SHA256SUMS`` is missing or unreadable, the file is not listed there, it
        cannot be decompressed, or the checksum of its uncompressed bytes differs. The message
        names the file and how to restore the data.

    Notes
    -----
    Hashes are cached per process by the file's stat signature, so re-verifying an unchanged file
    costs one ``stat`` call.
    """
    path, sig, expected = _locate(relpath)
    with _lock:
        digest = _hash_cache.get(sig)
    if digest is None:
        digest = hashlib.sha256(_decode(path, _read_bytes(path))).hexdigest()
    _check_digest(path, sig, digest, expected)
    return path


def read_bytes(relpath: str | os.PathLike) -> bytes:
    """The verified, uncompressed bytes of a data file: the official (opfunu) file's content.

    Parameters
    ----------
    relpath : str or path-like
        Path relative to the data folder, e.g. ``"cec2017/M_3_D10.txt"``.

    Returns
    -------
    bytes
        What to write where another program reads the file under its plain name.

    Raises
    ------
    CECDataError
        As :func:`verify`.
    """
    path, sig, expected = _locate(relpath)
    # Hash the very bytes that are returned, so a file cannot change between check and read.
    data = _decode(path, _read_bytes(path))
    _check_digest(path, sig, hashlib.sha256(data).hexdigest(), expected)
    return data


def verify_all() -> None:
    """Verify every file in :data:`REQUIRED_FILES`.

    Raises
    ------
    CECDataError
        For the first file that fails, or if ``SHA256SUMS`` lists files other than the
        required ones.
    """
    root = data_dir()
    extra = sorted(set(_load_sums(root)) - set(REQUIRED_FILES))
    if extra:
        raise CECDataError(
            f"{root / SUMS_NAME} lists files this version of gpude does not expect: "
            f"{', '.join(extra)}. {_RESTORE_HINT}"
        )
    for rel in REQUIRED_FILES:
        verify(rel)


def parse_numbers(data: bytes, source: str | os.PathLike) -> np.ndarray:
    """Parse whitespace-separated numbers into a 2-D float64 array, one row per non-empty line.

    Parameters
    ----------
    data : bytes
        File content; LF and CRLF line endings are both accepted.
    source : str or path-like
        Where the bytes came from, for error messages.

    Returns
    -------
    numpy.ndarray
        Shape ``(n_lines, n_values_per_line)``.

    Raises
    ------
    CECDataError
        If a token is not a number, lines have different lengths, or there are no numbers.
    """
    try:
        rows = [
            [float(tok) for tok in line.split()]
            for line in data.decode("ascii").splitlines()
            if line.strip()
        ]
    except (UnicodeDecodeError, ValueError) as exc:
        raise CECDataError(f"CEC data file {source} cannot be parsed: {exc}. {_RESTORE_HINT}") from exc
    if not rows:
        raise CECDataError(f"CEC data file {source} contains no numbers. {_RESTORE_HINT}")
    widths = {len(r) for r in rows}
    if len(widths) != 1:
        raise CECDataError(
            f"CEC data file {source} has rows of different lengths {sorted(widths)}. {_RESTORE_HINT}"
        )
    return np.array(rows, dtype=np.float64)


def load_array(relpath: str | os.PathLike) -> np.ndarray:
    """Verify a data file and return its numbers as a read-only 2-D float64 array.

    Parameters
    ----------
    relpath : str or path-like
        Path relative to the data folder, e.g. ``"cec2017/shift_data_22.txt"``.

    Returns
    -------
    numpy.ndarray
        One row per non-empty line (shift files of simple functions: ``(1, 100)``; composition
        shift files: ``(10, 100)``; ``M_n_D``: ``(D, D)`` or ``(10*D, D)``; shuffle files:
        ``(1, D)`` holding a 1-based permutation). ``flags.writeable`` is False because the array
        is shared between callers; copy it before modifying.

    Raises
    ------
    CECDataError
        If verification or parsing fails; the message names the file.

    Notes
    -----
    Arrays are cached per ``(data folder, relpath)``; a repeated call re-checks the file's stat
    signature and returns the cached array.
    """
    path, sig, expected = _locate(relpath)
    key = str(path)  # <data folder>/<relpath>.gz
    with _lock:
        hit = _array_cache.get(key)
        known = _hash_cache.get(sig)
    if hit is not None and hit[0] == sig and known == expected:
        return hit[1]
    # Hash the very bytes that are parsed, so a file cannot change between check and parse.
    data = _decode(path, _read_bytes(path))
    _check_digest(path, sig, hashlib.sha256(data).hexdigest(), expected)
    arr = parse_numbers(data, path)
    arr.flags.writeable = False
    with _lock:
        _array_cache[key] = (sig, arr)
    return arr
