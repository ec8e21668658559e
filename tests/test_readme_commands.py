"""Every command the README shows is one the project has: a `gpude` line parses with gpude's own
parser (its subcommand and options), a script or module it runs exists and knows the options given,
and a config, profile or file it names is in the repository. Nothing is run: what the commands do is
the rest of the suite's (and CI runs the README's test command itself)."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = ("gpude", "snakemake", "python", "python3", "bash")


def readme_commands() -> list[str]:
    """The command lines of the README's code blocks (continuations joined, comments dropped) that
    start with one of PROGRAMS or run one of the repository's shell scripts."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    commands = []
    for block in blocks:
        text = re.sub(r"\\\n\s*", " ", block)
        for line in text.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            for part in re.split(r"\s*&&\s*", line):  # `a && b`: each its own command
                first = part.split(" ", 1)[0]
                if first in PROGRAMS or first.endswith(".sh"):
                    commands.append(part)
    return commands


COMMANDS = readme_commands()


def test_the_readme_shows_the_commands_a_user_needs():
    firsts = {c.split()[0] for c in COMMANDS}
    assert {"gpude", "snakemake", "python"} <= firsts
    assert "snakemake --cores all" in COMMANDS


def _options(tokens: list[str]) -> list[str]:
    return [t.split("=", 1)[0] for t in tokens if t.startswith("--")]


@pytest.mark.parametrize("command", COMMANDS)
def test_a_readme_command_names_what_the_project_has(command):
    # `[--device gpu]`: an optional part, shown with its value; `<experiment>`, `...`: placeholders
    tokens = shlex.split(command.replace("[", " ").replace("]", " "))
    program, args = tokens[0], tokens[1:]
    if program == "gpude":
        from gpude.cli import build_parser

        try:
            build_parser().parse_args(args)
        except SystemExit as exc:
            pytest.fail(f"`{command}`: gpude's parser refuses it (exit {exc.code})")
    elif program == "snakemake":
        for flag, path in zip(args, args[1:]):
            if flag in ("--configfile", "--workflow-profile") and "<" not in path and path != "...":
                assert (ROOT / path).exists(), f"`{command}`: {path} is not in the repository"
    elif program == "bash" or program.endswith(".sh"):
        script = args[0] if program == "bash" else program
        assert (ROOT / script).is_file(), f"`{command}`: {script} is not in the repository"
        stages = args[1:] if program.endswith("gpu_checks.sh") else []
        for stage in stages:  # gpu_checks.sh STAGE...: a stage the script has
            assert re.search(rf"^    {stage}\)", (ROOT / script).read_text(), re.M), f"`{command}`: no stage {stage}"
    else:  # python: a script, or -m a module (not the venv's own -m venv, -m pytest, -m pip)
        if args[0] == "-m":
            if args[1] in ("venv", "pytest", "pip"):
                return
            spec = importlib.util.find_spec(args[1])
            assert spec is not None and spec.origin, f"`{command}`: no module {args[1]}"
            source = Path(spec.origin).read_text()
            given = _options(args[2:])
        else:
            script = ROOT / args[0]
            assert script.is_file(), f"`{command}`: {args[0]} is not in the repository"
            source, given = script.read_text(), _options(args[1:])
        for option in given:
            assert f'"{option}"' in source, f"`{command}`: {args[0]} has no option {option}"
