"""The project names no path outside itself: what a reader or a command needs is in the repository or
fetched by its own commands (results' logs, which record where a run happened, are data and exempt)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: what a reader or a command reads: the documentation, the code, the configuration, the workflow
PLACES = ["README.md", "CHANGELOG.md", "Snakefile", "environment.yml", "pyproject.toml", "paper/README.md",
          "docs", "src/gpude", "config", "workflow", "profiles", "benchmarks", "scripts", ".ci", "tests"]
#: a sibling folder of the checkout, or this workplace's absolute paths
OUTSIDE = re.compile(r"\.\./shared\b|(?<![\w.])/work/")
SUFFIXES = {".md", ".py", ".smk", ".yaml", ".yml", ".toml", ".sh", ".txt", ".rst", ""}
#: files that name such a path as an example of what must not appear, and why
EXEMPT = {"tests/test_report_document.py": "its list of developer notes the report must not contain"}


def _files():
    for place in PLACES:
        path = ROOT / place
        found = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
        for p in found:
            if ("__pycache__" not in p.parts and p.suffix in SUFFIXES and p != Path(__file__).resolve()
                    and p.relative_to(ROOT).as_posix() not in EXEMPT):
                yield p


def test_no_file_of_the_project_names_a_path_outside_it():
    hits = []
    for path in _files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        hits += [f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}" for n, line in enumerate(text.splitlines(), 1)
                 if OUTSIDE.search(line)]
    assert not hits, "\n".join(hits)


def test_the_rule_finds_what_it_forbids():
    assert OUTSIDE.search("see ../shared/guides/studies.md") and OUTSIDE.search("--git-dir /work/.mirror/x")
    assert not OUTSIDE.search("results/work/x.csv") and not OUTSIDE.search("a shared/ folder")
