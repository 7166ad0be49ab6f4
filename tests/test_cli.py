"""The command line through subprocess: outputs, JSON keys, exit codes 0/2/3/5."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CMD = [sys.executable, "-m", "crowdopt"]


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CMD, *args], input=stdin, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def instance(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "inst.json"
    r = run("generate", "olas-assign", "--seed", "1", "-o", str(path))
    assert r.returncode == 0, r.stderr
    return path


@pytest.mark.slow
def test_generate_pipe_compare_equal_objectives_gap_zero():
    gen = run("generate", "olas-assign", "--seed", "1")
    assert gen.returncode == 0
    r = run("compare", "-", "--json", stdin=gen.stdout)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    res = {x["algorithm"]: x for x in doc["results"]}
    assert {"sorted", "milp-epigraph"} <= set(res)
    for x in doc["results"]:
        for key in ("method", "algorithm", "status", "objective", "bound", "gap", "time_s", "certificate"):
            assert key in x
        for key in ("lower", "upper", "gap", "ratio", "bound_source"):
            assert key in x["certificate"]
        assert x["gap"] == 0.0 and x["certificate"]["certified"]
    assert res["sorted"]["method"] == "fast" and res["milp-epigraph"]["method"] == "exact"
    assert abs(res["sorted"]["objective"] - res["milp-epigraph"]["objective"]) <= 1e-7


@pytest.mark.slow
def test_compare_table_output(instance):
    r = run("compare", str(instance))
    assert r.returncode == 0
    assert "sorted" in r.stdout and "milp-epigraph" in r.stdout


@pytest.mark.slow
def test_solve_exact_json_and_output_file(instance, tmp_path):
    out = tmp_path / "res.json"
    r = run("solve", str(instance), "--method", "exact", "--json", "-o", str(out))
    assert r.returncode == 0
    res = json.loads(out.read_text())  # the Result's to_dict(), the same as stdout
    assert json.loads(r.stdout) == res
    assert res["problem"] == "olas-assign" and res["algorithm"] == "threshold"
    assert res["status"] == "optimal" and res["certificate"]["proven_optimal"] is True
    assert res["certificate"]["versions"]["highspy"]
    assert len(res["solution"]["assignment"]) == 15


@pytest.mark.slow
def test_certify_file_and_given_solution(instance, tmp_path):
    r = run("certify", str(instance), "--json")
    assert r.returncode == 0
    cert = json.loads(r.stdout)
    assert cert["certified"] and cert["ratio"] == 1.0 and cert["schema_version"] == 1
    sol = tmp_path / "sol.json"
    sol.write_text(json.dumps(cert["solution"]))
    r2 = run("certify", str(instance), "--solution", str(sol), "--json")
    assert r2.returncode == 0 and json.loads(r2.stdout)["primal_source"] == "given"


@pytest.mark.slow
def test_certify_bad_solution_fails_with_exit_5(instance, tmp_path):
    doc = json.loads(instance.read_text())
    sol = tmp_path / "bad.json"
    sol.write_text(json.dumps({"assignment": [0] * len(doc["entropies"])}))  # overloads labeler 0
    r = run("certify", str(instance), "--solution", str(sol))
    assert r.returncode == 5
    assert "FAILED" in r.stdout


@pytest.mark.parametrize("text,needle", [
    ("", "empty file"),
    ("{", "valid JSON"),
    ('{"problem": "olas-assign", "accuracies": [2], "capacities": [1], "entropies": [0.1]}', "accuracies[0]"),
    ('{"problem": "olas-assign", "accuracies": [0.5], "capacities": [-1], "entropies": [0.1]}', "capacities[0]"),
    ('{"problem": "nope"}', "problem"),
])
def test_bad_instance_gives_one_line_and_exit_2(text, needle):
    r = run("solve", "-", stdin=text)
    assert r.returncode == 2
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.stderr


@pytest.mark.slow
def test_bad_arguments_exit_2():
    assert run("generate", "olas-assign", "--param", "bogus=1").returncode == 2
    assert run("generate", "nope").returncode == 2
    assert run("solve").returncode == 2
    assert run("solve", "/nonexistent.json").returncode == 2


@pytest.mark.parametrize("flag,value", [("--time-limit", "-1"), ("--time-limit", "nan"),
                                        ("--threads", "0")])
def test_bad_solver_options_exit_2(instance, flag, value):
    r = run("solve", str(instance), "--method", "exact", flag, value)
    assert r.returncode == 2 and "expected" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_infeasible_exit_3():
    inst = {"problem": "olas-assign", "accuracies": [0.9], "capacities": [1], "entropies": [0.1, 0.2]}
    r = run("solve", "-", "--method", "exact", stdin=json.dumps(inst))
    assert r.returncode == 3


@pytest.mark.slow
def test_demo_runs_every_problem():
    r = run("demo", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["demo"]
    assert {"olas-assign"} <= {row["problem"] for row in rows}
    for row in rows:
        assert row["gap"] is not None


@pytest.mark.slow
def test_help_on_every_command():
    for args in (["--help"], ["solve", "--help"], ["compare", "--help"], ["certify", "--help"],
                 ["generate", "--help"], ["demo", "--help"]):
        assert run(*args).returncode == 0


def test_version_is_printed_on_stdout():
    """`crowdopt --version` answers on stdout (as `--help` does), stderr stays empty, exit 0;
    the version is the installed package's."""
    from crowdopt.version import __version__

    r = run("--version")
    assert r.returncode == 0 and r.stderr == ""
    assert r.stdout == f"crowdopt {__version__}\n"
