"""Markdown summary of the committed DE wall-time benchmarks beside the anchors (no GPU needed).

Reads every ``results/benchmarks/de_<device>_<tag>.csv`` (``benchmarks/de_performance.py`` on a GPU
host) and writes ``results/benchmarks/SUMMARY.md``: our mean wall time per (implementation, dtype,
function) beside the paper authors' own CUDA/C++ code's on the same GPU kind (an NVIDIA H200), as ratios;
a per-target met/missed table; our final errors beside the authors' iDE errors; the per-trial spread;
variant runs; failed configurations.

    python benchmarks/de_performance_summary.py [--results DIR] [--out FILE]

Which rows are main, variant or failed: :func:`split_main_variants` and :func:`load_results` (the
output states the rules too).
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import sys
from pathlib import Path

import pandas as pd

from gpude.core.io import write_atomic

ROOT = Path(__file__).resolve().parents[1]

RESULTS = ROOT / "results" / "benchmarks"

# Anchors (ANCHOR_SOURCE says whose and how measured; built with nvcc -O3 -arch=sm_90, g++ -O3 -march=native):
# mean wall seconds per run and the iDE's mean final errors, from paper/published/, as the REPORT reads them.
FUNCTIONS = [f"F{i:02d}" for i in range(1, 11)]
IMPLEMENTATIONS = ["sequential", "master_slave", "naive_gpu", "all_gpu", "ide"]
DTYPES = ["float32", "float64"]
ANCHOR_GPU = "H200"          # the anchors apply to devices whose GPU name contains this
ANCHOR_DTYPE = "float32"
ANCHOR_SETTING = dict(dim=100, popsize=250, F=0.5, CR=0.3, max_fes=10_000_000)
ANCHOR_SOURCE = ("paper/published/janssen_cs1_authors_code_h200.csv: the authors' CUDA/C++ code "
                 "(DylanJanssen/GPU-Accelerated-Evolutionary-Optimisation @ c2b3ef8) on an "
                 "NVIDIA H200 with a 16-core Intel Xeon host, float32, D=100, NP=250, F=0.5, "
                 "CR=0.3, 1e7 FEs, seed 0 (GPU models: mean of 3 runs; CPU models: 1 run)")


def _published(suffix: str = "") -> dict:
    """paper/published/janssen_cs1_authors_code_h200{suffix}.csv: implementation -> {function: value}."""
    text = (ROOT / "paper" / "published" / f"janssen_cs1_authors_code_h200{suffix}.csv").read_text()
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return {r["implementation"]: {f: float(r[f]) for f in FUNCTIONS if r[f]} for r in rows}


ANCHOR_WALL_S = _published()
ANCHOR_IDE_ERROR = _published("_errors")["ide"]
# paper/published/janssen_cs1_table3.csv: the paper's Table 3 (RTX 3080 + i9-10900F, same setting).
PAPER_TABLE3 = ("standard 80.8-434 s, master-slave (20 threads) 22-55 s, naive 14.0-15.6 s, "
                "All-GPU 1.33-2.57 s, iDE 0.60-1.85 s; iDE speed-up over standard DE 121x-235x")

TEXT_COLUMNS = ["options", "launch", "status", "gpu", "compute_capability", "gpu_sms",
                "cuda_driver", "cuda_runtime", "cpu", "cpu_cores", "host", "python", "numpy",
                "numba", "gpude", "numba_cuda", "git_commit", "timestamp_utc"]
COLUMNS = ["implementation", "function", "dtype", "trial", "seed", "dim", "popsize", "max_fes",
           "F", "CR", "wall_time_s", "best_error", "fes_used", "hit_target", "setup_time_s",
           "prebound"] + TEXT_COLUMNS


# ------------------------------------------------------------------------------------ loading
NOT_RESULTS = {"de_floor.csv"}  # gpude.report.floor's arithmetic, not measured runs


def file_tag(path: Path) -> str:
    """'de_nvidia-h200_gpu_poll8.csv' -> 'gpu_poll8' (device slugs hold no underscore)."""
    parts = path.stem.split("_", 2)
    return parts[2] if len(parts) == 3 else ""


def _clean(v) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    return str(v).strip()


def device_of(gpu, cpu) -> str:
    g = _clean(gpu)
    return g if g and g.lower() != "none" else f"CPU only ({_clean(cpu) or 'unknown CPU'})"


def load_results(results: Path) -> pd.DataFrame:
    """All de_*.csv rows, with columns file, tag, device, failed, variant_file added."""
    frames = []
    for path in sorted(Path(results).glob("de_*.csv")):
        if path.name in NOT_RESULTS:
            continue
        df = pd.read_csv(path, dtype={c: str for c in TEXT_COLUMNS})  # "13.0" stays "13.0"
        for c in COLUMNS:
            if c not in df:
                df[c] = float("nan")
        df = df.assign(file=path.name, tag=file_tag(path), variant_file="poll" in file_tag(path))
        frames.append(df)
    if not frames:
        return pd.DataFrame(columns=COLUMNS + ["file", "tag", "variant_file", "device", "failed"])
    df = pd.concat(frames, ignore_index=True)
    df["status"] = df["status"].map(_clean)
    df["options"] = df["options"].map(_clean)
    df["device"] = [device_of(g, c) for g, c in zip(df.gpu, df.cpu)]
    df["failed"] = df.status.str.startswith("error:") | df.wall_time_s.isna()
    return df


def in_anchor_setting(g: pd.DataFrame) -> tuple[bool, str]:
    diffs = []
    for k, want in ANCHOR_SETTING.items():
        vals = pd.to_numeric(g[k], errors="coerce").dropna().unique()
        bad = [v for v in vals if not math.isclose(float(v), float(want), rel_tol=1e-9)]
        if bad:
            diffs.append(f"{k}={', '.join(f'{v:g}' for v in bad)}")
    return (not diffs), "; ".join(diffs)


def split_main_variants(ok: pd.DataFrame) -> tuple[pd.DataFrame, list[dict]]:
    """Main rows (one source per device/implementation/dtype/function) and the variant groups.

    Files measuring different functions complement each other; only for the same function
    does the newest file supersede the older ones.
    """
    main_parts, variants = [], []
    keys = ["device", "implementation", "dtype", "function"]
    for _, g in ok.groupby(keys, sort=False):
        cands = []
        for _, s in g.groupby(["file", "options"], sort=False):
            same, diff = in_anchor_setting(s)
            if s.variant_file.iloc[0]:
                variants.append(dict(rows=s, reason="variant file (tag contains 'poll')"))
            elif not same:
                variants.append(dict(rows=s, reason=f"setting differs from the anchors' ({diff})"))
            else:
                cands.append(s)
        if not cands:
            continue
        cands.sort(key=lambda s: (str(s.timestamp_utc.max()), s.file.iloc[0]), reverse=True)
        main_parts.append(cands[0])
        for s in cands[1:]:
            variants.append(dict(rows=s, reason=f"superseded by newer {cands[0].file.iloc[0]}"))
    main = pd.concat(main_parts, ignore_index=True) if main_parts else ok.iloc[0:0]
    return main, variants


# --------------------------------------------------------------------------------- formatting
def fmt_time(v: float) -> str:
    if v >= 100:
        return f"{v:.0f}"
    if v >= 10:
        return f"{v:.1f}"
    if v >= 1:
        return f"{v:.2f}"
    return f"{v:.3f}"


def fmt_err(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "n/a"
    if v == 0:
        return "0"
    if 0.01 <= abs(v) < 1000:
        return f"{v:.3g}"
    m, e = f"{v:.1e}".split("e")
    return f"{m}e{int(e)}"


def fmt_ratio(r: float) -> str:
    """Two decimals, three where two would show 1.00 for a ratio that is not exactly 1."""
    s = f"{r:.2f}"
    return f"{r:.3f}x" if s == "1.00" and r != 1.0 else f"{s}x"


def function_columns(d: pd.DataFrame) -> list[str]:
    """F01..F10, then any other function present in the data."""
    extra = sorted(set(d.function.map(_clean)) - set(FUNCTIONS) - {""}) if not d.empty else []
    return FUNCTIONS + extra


def anchor_for(device: str, impl: str, fid: str) -> float | None:
    """The authors' wall time for this cell, or None (other GPU kind, or no such model/function)."""
    if ANCHOR_GPU not in device:
        return None
    return ANCHOR_WALL_S.get(impl, {}).get(fid)


def stats(g: pd.DataFrame) -> dict:
    w = g.wall_time_s.astype(float)
    hit = g.hit_target.astype(str).str.lower().eq("true").sum()
    return dict(mean=w.mean(), n=len(w), lo=w.min(), hi=w.max(), hit=int(hit),
                err=pd.to_numeric(g.best_error, errors="coerce").mean())


def cell(device: str, impl: str, fid: str, s: dict | None) -> str:
    if s is None:
        return "not measured"
    ours = f"{fmt_time(s['mean'])} (n={s['n']})" + (" †" if s["hit"] else "")
    a = anchor_for(device, impl, fid)
    if a is None:
        return ours
    return f"{ours} / {a:g} = {fmt_ratio(s['mean'] / a)}"


def _ordered(keys):
    rank = {k: i for i, k in enumerate(IMPLEMENTATIONS)}
    return sorted(keys, key=lambda k: (rank.get(k[0], len(rank)), k[0],
                                       DTYPES.index(k[1]) if k[1] in DTYPES else 9, k[1]))


def _short(commit) -> str:
    return _clean(commit)[:7] or "?"


def _uniq(s: pd.Series) -> str:
    vals = [v for v in dict.fromkeys(_clean(x) for x in s) if v]
    return ", ".join(vals) if vals else "?"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    return (["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
            + ["| " + " | ".join(r) + " |" for r in rows])


# ----------------------------------------------------------------------------------- sections
def header_section(df: pd.DataFrame) -> list[str]:
    lines = ["# DE wall time: our implementations beside the authors' code", "",
             "Written by `benchmarks/de_performance_summary.py` from the committed "
             "`results/benchmarks/de_*.csv` (no GPU needed). Setting of every main table: "
             "case study 1 of Janssen et al., DE/rand/1/bin, D=100, NP=250, F=0.5, CR=0.3, "
             "10,000,000 FEs, target error 1e-8.", ""]
    if df.empty:
        return lines + ["No benchmark files found: nothing measured yet.", ""]
    devices = list(dict.fromkeys(df.device))
    lines += [f"Devices in the data: **{'**, **'.join(devices)}**.", "",
              "## Sources", ""]
    rows = []
    for fname, g in df.groupby("file", sort=True):
        rows.append([
            f"`{fname}`", _uniq(g.device),
            f"{_uniq(g.cpu)} x{_uniq(g.cpu_cores)}",
            f"CC {_uniq(g.compute_capability)}, {_uniq(g.gpu_sms)} SMs, driver "
            f"{_uniq(g.cuda_driver)}, runtime {_uniq(g.cuda_runtime)}",
            f"gpude {_uniq(g.gpude)}, numba {_uniq(g.numba)}, numba-cuda {_uniq(g.numba_cuda)}, "
            f"numpy {_uniq(g.numpy)}, Python {_uniq(g.python)}",
            ", ".join(f"`{c}`" for c in dict.fromkeys(_short(c) for c in g.git_commit)),
            _uniq(g.timestamp_utc),
            f"{int((~g.failed).sum())} ok, {int(g.failed.sum())} failed",
            ", ".join(dict.fromkeys(g.implementation.map(_clean))),
        ])
    lines += table(["file", "device", "CPU", "CUDA", "versions", "commit", "time (UTC)", "rows",
                    "implementations"], rows)
    return lines + [""]


def main_section(main: pd.DataFrame) -> list[str]:
    lines = ["## Wall time (s), mean over trials (n), ours vs the authors' code on the same GPU "
             "kind", "",
             f"Anchors ('theirs'): {ANCHOR_SOURCE}. Each cell: our mean wall seconds per run "
             "(n trials, seeds 0..n-1, after a JIT warm-up) / the authors' mean = ratio; below "
             "1.00x we are faster. Cells without an anchor show ours only. The anchors are "
             "float32: the float64 ratios compare unlike arithmetic and are for information. "
             "Runs from files whose tag contains `poll` are not in this table (see Variants); "
             "where several files hold one implementation and dtype, the newest is shown here "
             "and the others are listed under Variants.", "",
             f"For reference, the paper's Table 3 (RTX 3080 + i9-10900F, same setting; "
             f"paper/published/janssen_cs1_table3.csv): {PAPER_TABLE3}.", ""]
    if main.empty:
        return lines + ["Not measured: no successful run in the anchors' setting.", ""]
    for device, d in main.groupby("device", sort=False):
        anchored = ANCHOR_GPU in device
        lines += [f"### {device}" + ("" if anchored else
                                    " (no anchor for this device: ours only)"), ""]
        rows, spread, fids = [], [], function_columns(d)
        for impl, dtype in _ordered(set(zip(d.implementation, d.dtype))):
            g = d[(d.implementation == impl) & (d.dtype == dtype)]
            per_f = {f: stats(x) for f, x in g.groupby("function")}
            src = f"{g.tag.iloc[0]} @`{_short(g.git_commit.iloc[0])}`"
            rows.append([impl, dtype, g.options.iloc[0] or "-", src]
                        + [cell(device, impl, f, per_f.get(f)) for f in fids])
            spread.append([impl, dtype] + [
                f"{fmt_time(per_f[f]['lo'])}-{fmt_time(per_f[f]['hi'])}" if f in per_f
                else "not measured" for f in fids])
        lines += table(["implementation", "dtype", "options", "source"] + fids, rows)
        if (d.hit_target.astype(str).str.lower() == "true").any():
            lines += ["", "† at least one trial stopped early at the target error, so its wall "
                          "time covers fewer than 1e7 FEs."]
        missing = [i for i in IMPLEMENTATIONS if i not in set(d.implementation)]
        if missing:
            lines += ["", f"Not measured on this device: {', '.join(missing)}."]
        lines += ["", f"#### Per-trial spread: min-max wall time (s) over the trials ({device})",
                  ""]
        lines += table(["implementation", "dtype"] + fids, spread)
        lines.append("")
    return lines


TARGETS = [  # (implementation, dtype, label)
    ("ide", "float32", "iDE <= 1.0x on every function"),
    ("all_gpu", "float32", "All-GPU DE <= 1.0x"),
    ("all_gpu", "float64", "All-GPU DE, float64 (information: anchors are float32)"),
    ("naive_gpu", "float32", "naive GPU <= 1.0x where anchored"),
    ("master_slave", "float32", "master-slave <= 1.0x where anchored"),
    ("sequential", "float32", "standard DE (sequential) <= 1.0x"),
]


def target_section(main: pd.DataFrame) -> list[str]:
    lines = ["## Target check: our wall time / the authors' on the same GPU kind <= 1.0x", "",
             "Compared on the float32 rows, since the anchors are float32 (the float64 All-GPU "
             "row is shown for information). `met` = ratio <= 1.00 (unrounded); `no anchor` = the "
             "authors did not measure that model on that function.", ""]
    devices = [d for d in dict.fromkeys(main.device) if ANCHOR_GPU in d] if not main.empty else []
    if not devices:
        return lines + [f"Not measured: no main run on an {ANCHOR_GPU}.", ""]
    for device in devices:
        d = main[main.device == device]
        rows = []
        for impl, dtype, label in TARGETS:
            g = d[(d.implementation == impl) & (d.dtype == dtype)]
            means = g.groupby("function").wall_time_s.mean().to_dict()
            cells, met, missed, absent = [], 0, 0, 0
            for f in FUNCTIONS:
                a = anchor_for(device, impl, f)
                if a is None:
                    cells.append("no anchor")
                elif f not in means:
                    cells.append("not measured")
                    absent += 1
                else:
                    r = means[f] / a
                    if r <= 1.0:
                        met += 1
                        cells.append(f"met {fmt_ratio(r)}")
                    else:
                        missed += 1
                        cells.append(f"**missed** {fmt_ratio(r)}")
            total = met + missed + absent
            if met + missed == 0:
                verdict = "not measured"
            elif met == total:
                verdict = f"met on all {total}"
            else:
                verdict = (f"met on {met} of {total}" + (f", missed on {missed}" if missed else "")
                           + (f", {absent} not measured" if absent else ""))
            rows.append([label, dtype] + cells + [verdict])
        lines += [f"### {device}", ""]
        lines += table(["target", "dtype"] + FUNCTIONS + ["verdict"], rows)
        lines.append("")
    return lines


def error_section(main: pd.DataFrame) -> list[str]:
    lines = ["## Final error: our mean best error beside the authors' iDE", "",
             "Mean best error f(x) - f(x*) at the end of the run. Authors' iDE: "
             "paper/published/janssen_cs1_authors_code_h200_errors.csv (H200, float32, 3 runs all with seed 0; "
             "their GPU models stop at an error below 1e-7, ours at 1e-8; ours use seeds 0..n-1). Quality "
             "comes from the algorithm: any DE/rand/1/bin implementation should land in the same "
             "range.", ""]
    rows = [["authors' iDE (H200)", "float32", "3"] + [fmt_err(ANCHOR_IDE_ERROR[f])
                                                          for f in FUNCTIONS]]
    if main.empty:
        lines += table(["run", "dtype", "n"] + FUNCTIONS, rows)
        return lines + ["", "Ours: not measured.", ""]
    fids = function_columns(main)
    rows[0] += ["no anchor"] * (len(fids) - len(FUNCTIONS))
    for device, d in main.groupby("device", sort=False):
        keys = _ordered(set(zip(d.implementation, d.dtype)))
        keys = [k for k in keys if k[0] == "ide"] + [k for k in keys if k[0] != "ide"]
        for impl, dtype in keys:
            g = d[(d.implementation == impl) & (d.dtype == dtype)]
            errs = g.groupby("function").best_error.mean().to_dict()
            n = g.groupby("function").size()
            n_txt = str(n.iloc[0]) if n.nunique() == 1 else f"{n.min()}-{n.max()}"
            rows.append([f"ours: {impl} ({device})", dtype, n_txt]
                        + [fmt_err(errs[f]) if f in errs else "not measured" for f in fids])
        if "ide" not in set(d.implementation):
            rows.append([f"ours: ide ({device})", "-", "0"] + ["not measured"] * len(fids))
    lines += table(["run", "dtype", "n"] + fids, rows)
    return lines + [""]


def variants_section(variants: list[dict]) -> list[str]:
    lines = ["## Variants", "",
             "Runs not in the main table: files whose tag contains `poll` (an option sweep), runs "
             "in another setting, and older files superseded by a newer one for the same "
             "implementation, dtype and function. Cells: mean wall seconds (n) and, where anchored, the "
             "ratio to the authors' code.", ""]
    if not variants:
        return lines + ["None.", ""]
    rows = []
    for v in variants:
        g = v["rows"]
        device, impl, dtype = g.device.iloc[0], g.implementation.iloc[0], g.dtype.iloc[0]
        per_f = {f: stats(x) for f, x in g.groupby("function")}
        fcells = []
        for f in sorted(per_f):
            s = per_f[f]
            a = anchor_for(device, impl, f)
            fcells.append(f"{f}: {fmt_time(s['mean'])} (n={s['n']})"
                          + (f" = {fmt_ratio(s['mean'] / a)}" if a else ""))
        rows.append([f"`{g.file.iloc[0]}`", device, impl, dtype, g.options.iloc[0] or "-",
                     f"`{_short(g.git_commit.iloc[0])}`", v["reason"], "; ".join(fcells)])
    lines += table(["file", "device", "implementation", "dtype", "options", "commit", "why here",
                    "mean wall time (s) per function"], rows)
    return lines + [""]


def failed_section(df: pd.DataFrame) -> list[str]:
    lines = ["## Failed configurations", ""]
    bad = df[df.failed] if not df.empty else df
    if bad.empty:
        return lines + ["None.", ""]
    rows = [[f"`{r.file}`", r.device, _clean(r.implementation), _clean(r.dtype),
             _clean(r.function), _clean(r.options) or "-",
             (_clean(r.status) or "no wall time recorded").replace("|", "\\|")]
            for r in bad.itertuples()]
    lines += table(["file", "device", "implementation", "dtype", "function", "options", "status"],
                   rows)
    return lines + [""]


def render(df: pd.DataFrame) -> str:
    ok = df[~df.failed] if not df.empty else df
    main, variants = split_main_variants(ok) if not ok.empty else (ok, [])
    lines = (header_section(df) + main_section(main) + target_section(main) + error_section(main)
             + variants_section(variants) + failed_section(df))
    return "\n".join(lines).rstrip() + "\n"


#: sections other scripts (``python -m gpude.report.floor``) write into SUMMARY.md between
#: ``<!-- name:begin -->`` and ``<!-- name:end -->``: kept on a rewrite
KEPT_SECTION = re.compile(r"<!-- ([a-z0-9-]+):begin -->.*?<!-- \1:end -->\n?", re.S)


def kept_sections(old: str) -> str:
    """The marked sections of the previous SUMMARY.md, in their order, to append to the new one."""
    return "".join(m.group(0).rstrip("\n") + "\n\n" for m in KEPT_SECTION.finditer(old)).rstrip("\n")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--results", default=str(RESULTS), help="folder holding de_*.csv")
    p.add_argument("--out", default=None, help="Markdown file (default: RESULTS/SUMMARY.md)")
    args = p.parse_args(argv)
    results = Path(args.results)
    out = Path(args.out) if args.out else results / "SUMMARY.md"
    text = render(load_results(results))
    kept = kept_sections(out.read_text()) if out.exists() else ""
    write_atomic(out, text + ("\n" + kept + "\n" if kept else ""))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
