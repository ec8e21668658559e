"""The one problem registry (gpude.problems): every name the functions' view resolved, the same
problem objects, lists per suite, registered problems, and `gpude problems`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from gpude import problems
from gpude.cli import main
from gpude.core.errors import InvalidInputError, UnknownFunctionError, UnsupportedDimensionError
from gpude.functions import get_function, list_functions
from gpude.functions.function import canonical_id
from gpude.problems import registry
from gpude.problems.instances import find_instance

FUNCTION_SUITES = ("janssen", "qin_cec2005", "nashed", "cec2017", "lastra", "cec2010")
INSTANCE_SUITES = ("lop", "lolib", "n-lolib", "etc")


def a_dim(fid: str) -> int:
    """A dimension every function of the id's suite supports."""
    return 100 if fid.startswith("C") else 10


@pytest.fixture
def no_registered(monkeypatch):
    monkeypatch.setattr(registry, "_REGISTERED", {})


@pytest.mark.parametrize("fid", list_functions("all"))
def test_get_problem_gives_the_function_get_function_gives(fid):
    f = get_function(fid, a_dim(fid))
    assert problems.get_problem(fid, a_dim(fid)) is f
    assert problems.get_problem(fid.lower(), a_dim(fid)) is f  # case-insensitive, as get_function
    assert problems.canonical_name(fid.lower()) == canonical_id(fid.lower()) == fid
    assert problems.problem_set(fid) is None  # a function has no dimension of its own


def test_get_problem_resolves_every_instance_get_function_resolved(monkeypatch):
    """Each LOP and ETC name, in the paper's spelling or another case, to the same constructor call
    (stubbed: the instance files are not in the repository)."""
    from gpude.problems import lop, scheduling

    monkeypatch.setattr(lop, "get_lop", lambda name: ("lop", name))
    monkeypatch.setattr(scheduling, "get_etc", lambda name: ("etc", name))
    names = [n for suite in ("lop", "etc") for n in list_functions(suite)]
    assert len(names) > 100
    for name in names:
        kind, known = find_instance(name)
        for spelling in (name, name.upper(), name.lower()):
            assert problems.get_problem(spelling) == (kind, known)
            assert problems.get_problem(spelling, "instance") == get_function(spelling, "instance") == (kind, known)
            assert problems.canonical_name(spelling) == canonical_id(spelling) == known
        assert problems.problem_set(name) == kind
        assert problems.instance_data_set(name) == {"lop": "lolib", "etc": "etc"}[kind]
        assert problems.get_problem(name, problems.instance_dim(name)) == (kind, known)


def test_list_problems_holds_every_function_and_instance_and_the_suites_agree(no_registered):
    everything = problems.list_problems()
    listed = [*list_functions("all"), *list_functions("lop"), *list_functions("etc")]
    assert everything == listed and len(set(everything)) == len(everything)
    for suite in (*FUNCTION_SUITES, *INSTANCE_SUITES):
        assert problems.list_problems(suite) == list_functions(suite), suite
    assert set(problems.suites()) == {*FUNCTION_SUITES, *INSTANCE_SUITES, "registered"}
    assert problems.list_problems("registered") == []
    with pytest.raises(InvalidInputError, match="unknown suite 'cec'.*janssen.*registered"):
        problems.list_problems("cec")


def test_unknown_names_and_dimensions_are_named():
    with pytest.raises(UnknownFunctionError, match=r"unknown problem 'F99'; available: F01, .*C20, the instances of "
                                                   r"`gpude problems --suite lop\|etc`"):
        problems.get_problem("F99", 10)
    assert issubclass(problems.UnknownProblemError, UnknownFunctionError)  # old `except` clauses still catch it
    with pytest.raises(UnknownFunctionError, match=r"unknown function 'F99'"):
        get_function("F99", 10)
    with pytest.raises(UnsupportedDimensionError, match="supported dimensions: 10, 30, 50, 100"):
        problems.get_problem("F01")  # a function needs a dimension
    with pytest.raises(UnsupportedDimensionError, match="be75eec has dimension 50"):
        problems.get_problem("be75eec", 10)
    assert problems.canonical_name(" f11 ") == canonical_id("f11") == "F11"  # unknown: upper-cased, as before


def test_a_registered_objective_is_a_problem_like_the_others(no_registered):
    from gpude.problems.objective import UserObjective

    def sphere(x):
        return (x * x).sum()

    objective = UserObjective(sphere, [(-1.0, 1.0)] * 3, name="my_sphere")
    problems.register_problem("my_sphere", objective)
    assert problems.get_problem("my_sphere") is objective is get_function("my_sphere", 3)
    assert problems.list_problems("registered") == ["my_sphere"] == problems.list_problems()[-1:]
    assert problems.problem_set("my_sphere") == "registered" and problems.instance_dim("my_sphere") == 3
    assert problems.describe("my_sphere") == ("registered", "3", "UserObjective")
    with pytest.raises(UnsupportedDimensionError, match="my_sphere has dimension 3"):
        problems.get_problem("my_sphere", 4)
    assert problems.get_problem("my_sphere").evaluate(np.ones(3)) == 3.0


def test_a_family_plugs_in_by_import_string(monkeypatch):
    """The way gpude/__init__.py plugs the functions in: by name, imported on first lookup."""
    from gpude.functions.families import BENCHMARK_FUNCTIONS

    monkeypatch.setattr(registry, "_FAMILIES", list(registry._FAMILIES))
    before = list(registry.families())
    assert BENCHMARK_FUNCTIONS in before and "gpude.functions.families:BENCHMARK_FUNCTIONS" in registry._FAMILIES
    registry.register_family("gpude.functions.families:BENCHMARK_FUNCTIONS")  # already there: no change
    assert list(registry.families()) == before
    with pytest.raises(InvalidInputError, match="module:attribute"):
        registry.register_family("gpude.functions.families")


def test_the_problem_layer_loads_without_the_functions():
    """gpude.problems never imports gpude.functions: naming an instance leaves them unloaded, a
    function's name loads them through the family registered by name."""
    code = ("import sys, gpude.problems as p\n"
            "assert 'gpude.functions' not in sys.modules\n"
            "assert p.canonical_name('BE75EEC') == 'be75eec' and p.problem_set('ThMhCc') == 'etc'\n"
            "assert 'gpude.functions' not in sys.modules\n"
            "assert p.get_problem('f01', 10).fid == 'F01' and 'gpude.functions' in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_cli_problems_lists_every_problem_with_its_family_and_dimensions(capsys):
    assert main(["problems"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split()[1] for line in out.splitlines()[1:] if line and line[0] != "\n"
            and len(line.split()) > 2 and line.split()[1] in ("functions", "large-scale", "lop", "etc")}
    assert list(rows) == problems.list_problems()
    assert rows["F01"] == "functions" and rows["C20"] == "large-scale" and rows["N-be75eec"] == "lop" \
        and rows["ThMhCc"] == "etc"
    assert "ThMhCc       etc          512" in out and f"{len(rows)} problem(s)" in out

    assert main(["problems", "--suite", "nashed"]) == 0
    out = capsys.readouterr().out
    assert "N07   functions    any integer from 2 to 100" in out and "F01" not in out and "20 problem(s)" in out

    assert main(["problems", "--suite", "cec"]) == 2
    assert "unknown suite 'cec'" in capsys.readouterr().err


def test_cli_functions_stays_the_functions_view(capsys):
    assert main(["functions"]) == 0
    out = capsys.readouterr().out
    assert "F01" in out and "be75eec" not in out and "`gpude problems --suite lop|etc`" in out
