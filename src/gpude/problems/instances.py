"""Instance data of the problems that are not CEC functions (Kromer et al.): LOLIB / N-LOLIB linear
ordering matrices and Braun et al.'s ETC matrices for independent task scheduling.

The instance files are public but not ours to redistribute, so they are not in the repository:
``gpude fetch-data lolib|etc`` downloads them from the public repositories and commits of
:data:`REPOSITORIES` (also in ``data/<set>/PROVENANCE.md``) and checks every file against
``data/<set>/SHA256SUMS``, which *is* in the repository; ``--from DIR`` takes an offline copy with
the same layout instead. What the repository keeps besides the checksums is derived data: the proven
optima and an optimal ordering per LOP instance, the Min-Min makespans of the ETC matrices.

Nothing is fetched at import time or on first use: a missing or altered file fails with a message
naming the command that restores it. ``GPUDE_INSTANCE_DATA=DIR`` puts the instance files in
``DIR/<set>`` (e.g. a shared cache on a cluster); the committed tables stay in ``data/<set>``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tempfile
from pathlib import Path

from ..core.errors import GpudeError

DATA_ROOT = Path(__file__).resolve().parents[3] / "data"
SUMS_NAME = "SHA256SUMS"
RAW_URL = "https://raw.githubusercontent.com/{repo}/{commit}/{path}"


class InstanceDataError(GpudeError):
    """A missing, altered or unknown instance file."""


def data_dir(kind: str) -> Path:
    """Where the instance files of a set live: ``data/<set>``, or ``$GPUDE_INSTANCE_DATA/<set>``."""
    override = os.environ.get("GPUDE_INSTANCE_DATA")
    return (Path(override) if override else DATA_ROOT) / kind


def table_dir(kind: str) -> Path:
    """Where the repository keeps a set's committed files (SHA256SUMS, optima, instance tables):
    always ``data/<set>``, wherever the instance files are."""
    return DATA_ROOT / kind


def _check_kind(kind: str) -> None:
    if kind not in ("lolib", "etc"):
        raise InstanceDataError(f"unknown instance set {kind!r}; known: lolib, etc")


def expected_sums(kind: str) -> dict[str, str]:
    """``local path -> sha256`` of the instance files of a set, from the committed SHA256SUMS."""
    _check_kind(kind)
    path = table_dir(kind) / SUMS_NAME
    if not path.is_file():
        raise InstanceDataError(f"{path} is missing: it belongs to the repository (git checkout -- {path})")
    sums = {}
    for line in path.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            sums[name.strip().removeprefix("./")] = digest
    return sums


def source_path(kind: str, name: str) -> str:
    """Where a file lives in its public repository."""
    if kind == "lolib":
        if name.startswith("LOLIB/"):
            return "lolib/" + name.split("/", 1)[1]
        base = name.split("/", 1)[1]  # N-LOLIB/N-x -> IO/N-x; N-be75eec: the original, no title line
        return "IO/N-be75eec-orig" if base == "N-be75eec" else "IO/" + base
    return "AE/ProblemInstances/HCSP/Braun_et_al/" + name


REPOSITORIES = {"lolib": ("coliveira/LinOrderingSolver", "d3772d8db124f904f4f56b0e456f2c2258ec7450"),
                "etc": ("sudhanshupatra/hcsp-chc", "591a1746f6e85347057b16c0ebf26717d036cd53")}


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def instance_file(kind: str, name: str) -> Path:
    """The verified path of an instance file (e.g. ``("lolib", "LOLIB/be75eec")``)."""
    sums = expected_sums(kind)
    if name not in sums:
        known = sorted(sums)
        raise InstanceDataError(f"no {kind} instance file {name!r}; known: {', '.join(known[:6])}, ... "
                                f"({len(known)} files)")
    path = data_dir(kind) / name
    if not path.is_file():
        raise InstanceDataError(f"instance file {path} is missing: run `gpude fetch-data {kind}` (downloads "
                                f"the public files) or `gpude fetch-data {kind} --from DIR` (an offline copy)")
    digest = sha256_bytes(path.read_bytes())
    if digest != sums[name]:
        raise InstanceDataError(f"instance file {path} does not match {table_dir(kind) / SUMS_NAME} (sha256 "
                                f"{digest[:12]}..., expected {sums[name][:12]}...): it was altered; restore it "
                                f"with `gpude fetch-data {kind} --force`")
    return path


# The instances by their names in Kromer et al.'s tables, from the committed tables (no instance file
# is read): LOP -> data/lolib/optima.csv (column n), ETC -> data/etc/instances.csv (n_tasks).
_CATALOG_FILES = {"lop": ("lolib", "optima.csv", "n"), "etc": ("etc", "instances.csv", "n_tasks")}
_CATALOG: dict = {}


def catalog(problem: str) -> dict[str, int]:
    """``instance name -> dimension`` of a problem set (``"lop"`` or ``"etc"``), in table order."""
    import csv

    kind, file, size = _CATALOG_FILES[problem]
    path = table_dir(kind) / file
    if (problem, path) not in _CATALOG:
        if not path.is_file():
            raise InstanceDataError(f"{path} is missing: it belongs to the repository (git checkout -- {path})")
        with open(path, newline="") as fh:
            _CATALOG[(problem, path)] = {r["paper_name"]: int(r[size]) for r in csv.DictReader(fh)}
    return _CATALOG[(problem, path)]


def find_instance(name) -> tuple[str, str] | None:
    """``(problem set, name as in the paper)`` for an instance name (case-insensitive), else None."""
    text = str(name).strip().lower()
    for problem in _CATALOG_FILES:
        for known in catalog(problem):
            if known.lower() == text:
                return problem, known
    return None


def _download(kind: str, name: str) -> bytes:
    repo, commit = REPOSITORIES[kind]
    url = RAW_URL.format(repo=repo, commit=commit, path=source_path(kind, name))
    import urllib.request  # (here, not at the top: ~20 ms of every batch's start-up, for a rare download)

    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.read()
    except OSError as exc:
        raise InstanceDataError(f"could not download {url}: {exc}; with an offline copy of the files use "
                                f"`gpude fetch-data {kind} --from DIR`") from None


def fetch(kind: str, source: Path | None = None, force: bool = False, out=None) -> list[str]:
    """Bring every instance file of a set into ``data/<kind>/``, verified; returns the names written.

    Files already present and intact are left alone; an altered one is replaced only with ``force``.
    Everything is verified in a staging folder first, so a failure leaves nothing half-written.
    """
    sums = expected_sums(kind)
    dest = data_dir(kind)
    todo = []
    for name, digest in sorted(sums.items()):
        path = dest / name
        if path.is_file():
            if sha256_bytes(path.read_bytes()) == digest:
                continue
            if not force:
                raise InstanceDataError(f"{path} is altered (its sha256 differs from {SUMS_NAME}); "
                                        f"`gpude fetch-data {kind} --force` replaces it")
        todo.append(name)
    if source is not None and todo and Path(source).exists() and not Path(source).is_dir():
        raise InstanceDataError(f"--from {source} is a file: an offline copy is a folder with the layout "
                                f"of data/{kind}/")
    created = [p for p in (dest, *dest.parents) if not p.exists()]  # removed again if nothing is written
    dest.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{kind}.staging-", dir=dest))
    written = False
    try:
        for name in todo:
            data = (Path(source) / name).read_bytes() if source is not None else _download(kind, name)
            got = sha256_bytes(data)
            if got != sums[name]:
                where = Path(source) / name if source is not None else source_path(kind, name)
                raise InstanceDataError(f"{where} has sha256 {got[:12]}..., but {table_dir(kind) / SUMS_NAME} expects "
                                        f"{sums[name][:12]}...: not the published file; nothing was written")
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_bytes(data)
        for name in todo:
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            os.replace(staging / name, dest / name)
            written = True
    except FileNotFoundError as exc:
        raise InstanceDataError(f"{exc.filename} is missing from the offline copy: --from expects the "
                                f"layout of data/{kind}/ (e.g. {next(iter(sums))})") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in created if not written else []:  # innermost first: nothing half-made is left
            try:
                folder.rmdir()
            except OSError:
                break
    print(f"{kind}: {len(todo)} file(s) written, {len(sums) - len(todo)} already intact, in {dest}",
          file=out or sys.stdout)
    return todo


def main(argv: list[str] | None = None) -> int:
    from ..core.errors import OneLineArgumentParser  # errors in one line

    p = OneLineArgumentParser(prog="gpude fetch-data lolib|etc",
                                description="Download Kromer et al.'s instance files and verify them.")
    p.add_argument("kind", choices=("lolib", "etc"))
    p.add_argument("--from", dest="source", type=Path, help="an offline copy with the layout of data/<kind>/")
    p.add_argument("--force", action="store_true", help="replace files that differ from SHA256SUMS")
    args = p.parse_args(argv)
    try:
        fetch(args.kind, args.source, args.force)
    except InstanceDataError as exc:
        print(f"gpude fetch-data: {exc}", file=sys.stderr)
        return 1
    return 0
