"""Populate ``data/cec/`` from the pinned ``opfunu==1.0.4`` wheel on PyPI.

Run as ``python -m gpude.cecdata.fetch [--dest DIR] [--force] [--wheel PATH]`` or ``gpude fetch-data``.

The wheel is downloaded with pip (so configured mirrors and proxies apply), its sha256 is checked
against :data:`WHEEL_SHA256`, the 217 files of :data:`gpude.cecdata.REQUIRED_FILES` are extracted
byte for byte and written gzip-compressed as ``<name>.gz`` (:func:`gpude.cecdata.compress`) into a
staging folder beside the destination and then moved into place, together with ``SHA256SUMS`` (the
SHA-256 of the uncompressed bytes, under the plain names), ``PROVENANCE.md`` and a
``.gitattributes`` that stops git from converting anything. A plain ``<name>`` left by an older
gpude beside a ``<name>.gz`` written here is removed. Only opfunu's data files are used: its function code is
wrong for most of the benchmark functions and is never imported.

If the destination already has a ``SHA256SUMS`` that disagrees with the wheel's files, nothing is
written unless ``--force`` is given. If it agrees, files that are missing or altered on disk are
restored and everything else is left untouched. If it agrees on every file it lists but lacks files
that this version needs (data folders fetched by an older gpude), those are added, with the checksum
list and provenance rewritten.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import hashlib
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import zipfile
import zlib
from pathlib import Path

from . import (
    GZ_SUFFIX,
    REQUIRED_FILES,
    SUMS_NAME,
    CECDataError,
    compress,
    data_dir,
    format_sums,
    parse_sums,
    sha256_file,
)

__all__ = [
    "FetchError",
    "OPFUNU_VERSION",
    "WHEEL_NAME",
    "WHEEL_SHA256",
    "opfunu_member",
    "differing_files",
    "plan",
    "fetch",
    "main",
]

OPFUNU_VERSION = "1.0.4"
WHEEL_NAME = f"opfunu-{OPFUNU_VERSION}-py3-none-any.whl"
#: sha256 of the wheel as published on PyPI; a different download is refused.
WHEEL_SHA256 = "ca2af1816552cb28ac4eb71519627bc32e8000514b6b7b34a654f70afbbd2240"
PYPI_URL = f"https://pypi.org/project/opfunu/{OPFUNU_VERSION}/"
PROVENANCE_NAME = "PROVENANCE.md"
# Git must never convert line endings here (core.autocrlf on Windows would): the bytes are checksummed.
GITATTRIBUTES_NAME = ".gitattributes"
GITATTRIBUTES_TEXT = "# Checked byte for byte against SHA256SUMS: never convert line endings.\n* -text\n"
#: What PROVENANCE.md records as the command (options such as a local --wheel path are not recorded:
#: the wheel is identified by its name and sha256).
CANONICAL_COMMAND = "python -m gpude.cecdata.fetch"

# opfunu renamed the CEC 2005 files; we store them under the official C code's names.
CEC2005_OPFUNU_NAMES = {
    "sphere_func_data.txt": "data_sphere.txt",
    "rosenbrock_func_data.txt": "data_rosenbrock.txt",
    "griewank_func_data.txt": "data_griewank.txt",
    "rastrigin_func_data.txt": "data_rastrigin.txt",
    "schwefel_206_data.txt": "data_schwefel_206.txt",
    "schwefel_213_data.txt": "data_schwefel_213.txt",
}

# Where each suite's official input data lives (data/cec/PROVENANCE.md).
OFFICIAL_SOURCES = {
    "cec2017": (
        "https://github.com/P-N-Suganthan/CEC2017-BoundContrained",
        "2c54cad22f015e803edb09ea86d4c961f5bab644",
        "CEC17_fast_pow-C++.zip : CEC17_fast_pow/input_data/",
    ),
    "cec2014": (
        "https://github.com/P-N-Suganthan/CEC2014",
        "98488087d590c29aaded9978ccfe2a356d10dd63",
        "cec14-c-code.zip : cec14-c-code/input_data/",
    ),
    "cec2005": (
        "https://github.com/P-N-Suganthan/CEC2005",
        "39f68099a10a9324e596ceb943deb1da26515d08",
        "C-Unix-linux-14-Mar-05.tar.bz2 : src/input_data/",
    ),
}


class FetchError(RuntimeError):
    """The data could not be fetched or installed; the message says why and what to do."""


def opfunu_member(relpath: str) -> str:
    """Return the wheel member that holds a data file.

    Parameters
    ----------
    relpath : str
        Official relative path, e.g. ``"cec2005/sphere_func_data.txt"``.

    Returns
    -------
    str
        e.g. ``"opfunu/cec_based/data_2005/data_sphere.txt"``.
    """
    suite, _, name = relpath.partition("/")
    if not suite.startswith("cec") or not name or "/" in name:
        raise ValueError(f"not a CEC data path: {relpath!r}")
    if suite == "cec2005":
        name = CEC2005_OPFUNU_NAMES.get(name, name)
    return f"opfunu/cec_based/data_{suite[3:]}/{name}"


def differing_files(recorded: dict[str, str], fresh: dict[str, str]) -> list[str]:
    """Paths whose checksum differs, or that only one of the two listings has; sorted."""
    return sorted(p for p in set(recorded) | set(fresh) if recorded.get(p) != fresh.get(p))


def plan(dest: Path, fresh: dict[str, str], force: bool = False) -> tuple[str, list[str]]:
    """Decide what to install into ``dest`` given the freshly extracted checksums.

    Parameters
    ----------
    dest : pathlib.Path
        Destination data folder (may not exist yet).
    fresh : dict of str to str
        Relative path -> sha256 of the files just extracted from the wheel.
    force : bool
        Overwrite even if ``dest/SHA256SUMS`` records other checksums.

    Returns
    -------
    action : str
        ``"create"`` (no SHA256SUMS yet), ``"replace"`` (differs, forced), ``"update"`` (agrees on
        every recorded file but lacks files this version needs, or stores some uncompressed as an
        older gpude did: they are added as ``.gz``, with any damaged recorded file,
        ``SHA256SUMS``, ``PROVENANCE.md`` and ``.gitattributes``), ``"restore"``
        (agrees, but some files are missing or altered) or ``"up-to-date"`` (nothing to do).
    names : list of str
        Files (relative to ``dest``) to move into place: data files by their plain names (stored
        as ``<name>.gz``), then ``SHA256SUMS``, ``PROVENANCE.md`` and ``.gitattributes``.

    Raises
    ------
    FetchError
        If the recorded checksums differ from ``fresh`` (or cannot be read) and ``force`` is False.
    """
    everything = sorted(fresh) + [SUMS_NAME, PROVENANCE_NAME, GITATTRIBUTES_NAME]
    sums_path = dest / SUMS_NAME
    if not sums_path.exists():
        return "create", everything
    try:
        recorded = parse_sums(sums_path.read_text(encoding="utf-8"), sums_path)
    except (OSError, UnicodeDecodeError, CECDataError) as exc:
        if force:
            return "replace", everything
        raise FetchError(
            f"{sums_path} cannot be read ({exc}); rerun with --force to overwrite it."
        ) from exc
    diff = differing_files(recorded, fresh)
    added = [p for p in diff if p not in recorded]
    if diff and diff == added:
        # An older data folder that agrees with the wheel on every file it records: a newer gpude
        # needs more files. Add them (and restore any damaged ones) without --force.
        damaged = [rel for rel in sorted(recorded) if not _stored_intact(dest, rel, fresh[rel])]
        return "update", sorted(added + damaged) + [SUMS_NAME, PROVENANCE_NAME, GITATTRIBUTES_NAME]
    if diff:
        if force:
            return "replace", everything
        raise FetchError(
            f"{sums_path} records checksums that differ from the opfunu {OPFUNU_VERSION} wheel for "
            f"{len(diff)} file(s): {', '.join(diff)}. Nothing was written; rerun with --force to "
            f"replace the data in {dest} with the wheel's."
        )
    damaged = [rel for rel in sorted(fresh) if not _stored_intact(dest, rel, fresh[rel])]
    if any((dest / rel).is_file() for rel in damaged):
        # A folder of an older gpude that stored the files uncompressed: install the .gz files and
        # rewrite the checksum list and provenance (which describe the storage).
        return "update", damaged + [SUMS_NAME, PROVENANCE_NAME, GITATTRIBUTES_NAME]
    damaged += [n for n in (PROVENANCE_NAME, GITATTRIBUTES_NAME) if not (dest / n).is_file()]
    return ("restore", damaged) if damaged else ("up-to-date", [])


def _stored_intact(dest: Path, rel: str, digest: str) -> bool:
    """Whether ``dest/<rel>.gz`` exists and decompresses to bytes with this sha256 (a plain
    ``<rel>`` of an older layout does not count: it is replaced by the ``.gz``)."""
    gz = dest / (rel + GZ_SUFFIX)
    try:
        return gz.is_file() and hashlib.sha256(gzip.decompress(gz.read_bytes())).hexdigest() == digest
    except (OSError, EOFError, zlib.error):
        return False


def download_wheel(directory: Path) -> Path:
    """Download the pinned wheel into ``directory`` with pip and return its path."""
    cmd = [
        sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
        "--disable-pip-version-check", f"opfunu=={OPFUNU_VERSION}", "-d", str(directory),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wheel = directory / WHEEL_NAME
    if proc.returncode != 0 or not wheel.is_file():
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-10:])
        raise FetchError(
            f"`{shlex.join(cmd)}` did not produce {WHEEL_NAME} (exit code {proc.returncode}):\n"
            f"{tail}\nCheck network access / the pip index configuration, or download the wheel "
            f"from {PYPI_URL} yourself and pass it with --wheel PATH."
        )
    return wheel


def check_wheel(wheel: Path, expected_sha256: str = WHEEL_SHA256) -> None:
    """Raise :class:`FetchError` unless the wheel's sha256 is the pinned one."""
    digest = sha256_file(wheel)
    if digest != expected_sha256:
        raise FetchError(
            f"{wheel} has sha256 {digest}, but {WHEEL_NAME} from PyPI has {expected_sha256}. "
            "The download is corrupt or is not the published wheel; delete it and fetch again "
            "(check the pip index/mirror if it keeps happening)."
        )


def extract(wheel: Path, out_dir: Path, files: tuple[str, ...] = REQUIRED_FILES) -> dict[str, str]:
    """Copy the data files out of the wheel, gzip-compressed; return the sha256 of their bytes.

    Parameters
    ----------
    wheel : pathlib.Path
        The opfunu wheel.
    out_dir : pathlib.Path
        Folder to write ``<suite>/<official name>.gz`` files into (fsynced, so a later rename is
        durable); each holds the wheel member's bytes unmodified, compressed by
        :func:`gpude.cecdata.compress`.
    files : tuple of str
        Official relative paths to extract.

    Returns
    -------
    dict of str to str
        Relative (plain) path -> sha256 of the uncompressed bytes.

    Raises
    ------
    FetchError
        Naming every member the wheel lacks.
    """
    digests: dict[str, str] = {}
    with zipfile.ZipFile(wheel) as zf:
        members = set(zf.namelist())
        missing = [f"{rel} (as {opfunu_member(rel)})" for rel in files if opfunu_member(rel) not in members]
        if missing:
            raise FetchError(f"{wheel.name} lacks {len(missing)} data file(s): {', '.join(missing)}")
        for rel in files:
            data = zf.read(opfunu_member(rel))
            target = out_dir / (rel + GZ_SUFFIX)
            target.parent.mkdir(parents=True, exist_ok=True)
            _write_durably(target, compress(data))
            digests[rel] = hashlib.sha256(data).hexdigest()
    return digests


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def provenance_text(digests: dict[str, str], wheel_sha256: str, command: str, date: str) -> str:
    """Render ``PROVENANCE.md`` for the data folder."""
    renames = "\n".join(
        f"| `data_2005/{old}` | `cec2005/{new}` |" for new, old in CEC2005_OPFUNU_NAMES.items()
    )
    suites = "\n".join(
        f"- `{suite}/`: {url} @ `{commit}`, {where}"
        for suite, (url, commit, where) in OFFICIAL_SOURCES.items()
    )
    counts = {s: sum(r.startswith(s + "/") for r in digests) for s in OFFICIAL_SOURCES}
    return f"""# CEC benchmark input data: provenance

Generated on {date} (UTC) by `{command}` from `{WHEEL_NAME}` (sha256 `{wheel_sha256}`).
Do not edit these files by hand: gpude verifies every file against `SHA256SUMS` on each load;
run `gpude fetch-data` to restore them.

## How stored

Each file is stored gzip-compressed as `<suite>/<name>.gz` (Python's
`gzip.compress(data, compresslevel=9, mtime=0)`: no time stamp, no file name in the header); gpude
decompresses it in memory. `SHA256SUMS` lists the SHA-256 of the *uncompressed* bytes under the
plain names `<suite>/<name>`, i.e. of the wheel's (official) bytes. To check by hand:

    cd data/cec && while read -r sum rel; do
      [ "$(gzip -dc "$rel.gz" | sha256sum | cut -d' ' -f1)" = "$sum" ] || echo "BAD $rel"; done < SHA256SUMS

and `gzip -dk <suite>/<name>.gz` gives the official file.

## What

{len(digests)} input data files of the official CEC benchmark C code (shift vectors, rotation
matrices and shuffle permutations): {counts['cec2017']} from CEC 2017, {counts['cec2014']} from CEC 2014,
{counts['cec2005']} from CEC 2005.
Only the files needed by the whole CEC 2017 suite (cec17_f01, cec17_f03..cec17_f30, D in {{10, 30,
50, 100}}; Janssen, Pullan & Liew's F01..F10 read a subset of them and two CEC 2014 functions), by
the CEC 2005 functions of Qin et al. and by Nashed et al.'s f7 and f17 (N07, N17: the CEC 2005
Schwefel 2.6 and 2.13 matrices) are kept. Checksums: `SHA256SUMS`.

## From where

- Wheel: `{WHEEL_NAME}` (opfunu {OPFUNU_VERSION}, {PYPI_URL}),
  sha256 `{wheel_sha256}`,
  downloaded with `python -m pip download --no-deps --only-binary=:all: opfunu=={OPFUNU_VERSION}`.
- Members `opfunu/cec_based/data_2017/<name>` -> `cec2017/<name>` and
  `opfunu/cec_based/data_2014/<name>` -> `cec2014/<name>` (same names); the CEC 2005 files are stored
  under the official C code's names:

| opfunu (`opfunu/cec_based/`) | here |
| --- | --- |
{renames}

- Bytes are copied unmodified from the wheel (line endings included), then compressed. Only
  opfunu's data files are used; its function code is not.

## Equivalence with the official data

The values equal the official CEC C code's input data modulo line endings: the official shift and
rotation files of CEC 2017 and CEC 2014 use CRLF line endings where the wheel has LF; after converting
CRLF to LF the bytes are identical, and the shuffle files and the CEC 2005 files are byte-identical,
except `cec2005/schwefel_213_data.txt`, which holds the official file's 201 x 100 numbers re-formatted
(equal values, different bytes). The project's tests compare every file numerically with the official
copy when it is available.
The official input data:

{suites}
"""


def fetch(
    dest: Path,
    force: bool = False,
    wheel: Path | None = None,
    *,
    command: str = CANONICAL_COMMAND,
    expected_sha256: str = WHEEL_SHA256,
    log=print,
) -> str:
    """Fetch, verify, extract and install the data; return the action taken (see :func:`plan`).

    Parameters
    ----------
    dest : pathlib.Path
        Destination data folder.
    force : bool
        Replace data whose recorded checksums differ from the wheel's.
    wheel : pathlib.Path, optional
        Use this local wheel instead of downloading one (its sha256 is still checked).
    command : str
        The command recorded in ``PROVENANCE.md`` (with the wheel's name and sha256; never a local
        path).
    expected_sha256 : str
        The wheel's required sha256 (tests substitute a fake wheel's).
    log : callable
        Receives progress messages.

    Raises
    ------
    FetchError
        If the download, the wheel checksum, the extraction or the comparison with the existing
        ``SHA256SUMS`` fails. The destination is then unchanged.
    """
    dest = Path(dest).absolute()
    if dest.exists() and not dest.is_dir():
        raise FetchError(f"destination {dest} exists and is not a folder")
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gpude-wheel-") as tmp:
        if wheel is None:
            log(f"downloading {WHEEL_NAME} with pip ...")
            wheel = download_wheel(Path(tmp))
        check_wheel(Path(wheel), expected_sha256)
        # The staging folder sits beside dest so that the final moves are renames on one filesystem.
        staging = Path(tempfile.mkdtemp(prefix=f".{dest.name}.staging-", dir=dest.parent))
        try:
            digests = extract(Path(wheel), staging)
            action, names = plan(dest, digests, force)
            if action == "up-to-date":
                log(f"{dest}: all {len(digests)} files already match {WHEEL_NAME}; nothing to do.")
                return action
            _write_durably(staging / SUMS_NAME, format_sums(digests).encode())
            date = _dt.datetime.now(_dt.UTC).date().isoformat()
            text = provenance_text(digests, expected_sha256, command, date)
            _write_durably(staging / PROVENANCE_NAME, text.encode())
            _write_durably(staging / GITATTRIBUTES_NAME, GITATTRIBUTES_TEXT.encode())
            # Everything is complete on disk before the first rename; each rename is atomic.
            for name in names:
                stored = name + GZ_SUFFIX if name in digests else name
                (dest / stored).parent.mkdir(parents=True, exist_ok=True)
                os.replace(staging / stored, dest / stored)
                if name in digests and (dest / name).is_file():
                    (dest / name).unlink()  # the plain file of an older layout

        finally:
            shutil.rmtree(staging, ignore_errors=True)
    if action == "update":
        log(f"{dest}: installed the file(s) this version of gpude needs and rewrote {SUMS_NAME} and "
            f"{PROVENANCE_NAME}: {', '.join(names)}")
    elif action == "restore":
        log(f"{dest}: checksums agree with {WHEEL_NAME}; restored {len(names)} file(s): {', '.join(names)}")
    else:
        log(f"{dest}: wrote {len(digests)} data files, {SUMS_NAME}, {PROVENANCE_NAME} and "
            f"{GITATTRIBUTES_NAME} ({action}).")
    return action


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point.

    Parameters
    ----------
    argv : list of str, optional
        The arguments after the command name (``None`` means ``sys.argv[1:]``, so a wrapper such as
        ``gpude fetch-data`` must pass its own remaining arguments explicitly).

    Returns
    -------
    int
        Exit status: 0 on success (data written, restored or already up to date), 1 on failure.
    """
    from ..core.errors import OneLineArgumentParser  # errors in one line

    parser = OneLineArgumentParser(
        prog="python -m gpude.cecdata.fetch",
        description=f"Extract the official CEC input data from the opfunu {OPFUNU_VERSION} wheel on PyPI "
        "into the gpude data folder, with checksums and provenance.",
    )
    parser.add_argument("--dest", type=Path, default=None,
                        help="destination folder (default: $GPUDE_DATA_DIR or <repo>/data/cec)")
    parser.add_argument("--force", action="store_true",
                        help="replace existing data whose SHA256SUMS differs from the wheel's files")
    parser.add_argument("--wheel", type=Path, default=None,
                        help=f"use this already downloaded {WHEEL_NAME} instead of running pip download")
    args = parser.parse_args(argv)
    dest = args.dest if args.dest is not None else data_dir()
    try:
        fetch(dest, args.force, args.wheel)
    except (FetchError, CECDataError, OSError, zipfile.BadZipFile) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
