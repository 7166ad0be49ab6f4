"""A fresh adversarial set, written from the user documentation (README, docs/inputs.md) alone,
of the classes that used to change meaning without a word: solution files, instance ids,
label and gold tables, time limits, label budgets and command-line arguments.

Each case is what a careful user or a careless script would write, with the outcome the
documentation promises: a refusal is exit 2 with exactly one stderr line naming the field and
nothing on stdout; an accepted input gives its documented meaning; `--json` prints one JSON
document; no case prints a traceback, and none outlives its limit (the slow ones run in a
subprocess with a timeout).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import crowdopt
from crowdopt import crowd
from crowdopt.cli import main

INSTANCES = {
    # labeler ids that are integers 10..14: positions 0..4 are no ids
    "oa-int": {"problem": "olas-assign", "schema_version": 1, "accuracies": [0.9, 0.8, 0.7,
               0.6, 0.55], "capacities": [2, 2, 2, 2, 2], "entropies": [0.1, 0.2, 0.3, 0.4],
               "labeler_ids": [10, 11, 12, 13, 14]},
    "oa-text": {"problem": "olas-assign", "schema_version": 1, "accuracies": [0.9, 0.8],
                "capacities": [2, 2], "entropies": [0.1, 0.2, 0.3],
                "labeler_ids": ["ana", "ben"]},
    "os": {"problem": "olas-select", "schema_version": 1, "accuracies": [0.9, 0.8],
           "capacities": [2, 2], "entropies": [0.1, 0.2, 0.3], "beta": 0.5,
           "labeler_ids": ["ana", "ben"], "point_ids": ["p1", "p2", "p3"]},
    "ls": {"problem": "labeler-set", "schema_version": 1, "qualities": [0.9, 0.8, 0.7, 0.6,
           0.55]},
    "ls-mixed": {"problem": "labeler-set", "schema_version": 1, "qualities": [0.9, 0.8, 0.7],
                 "labeler_ids": [1, "1", "x"]},
    "ws": {"problem": "worker-select", "schema_version": 1, "max_workers": 3,
           "scores": [3.0, 1.0, 2.0, 0.5], "worker_ids": [7, 8, 9, 10]},
    "ct": {"problem": "cltap", "schema_version": 1, "t": 3, "b": 4,
           "p": [[0.9, 0.8, 0.7], [0.7, 0.7, 0.6]]},
}

# (instance, solution file text, outcome): "2:NEEDLE" = refused naming NEEDLE; an int = exit
SOLUTIONS = [
    ("oa-int", '{"assignment": [0, 0, 1, 1]}', "2:solution.assignment[0]"),
    ("oa-int", '{"assignment": [10, 0, 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, true, 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, "11", 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, 11.0, 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, 1e400, 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, NaN, 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, [11], 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, 15, 11, 11]}', "2:solution.assignment[1]"),
    ("oa-int", '{"assignment": [10, 11, 11]}', "2:solution.assignment"),
    ("oa-int", '{"assignment": [10, 10, 11, 11], "selected": []}', "2:solution.selected"),
    ("oa-int", '{}', "2:solution.assignment"),
    ("oa-int", '{"assignment": [10, 10, 11, 11]}', 0),
    ("oa-text", '{"assignment": ["ana", "ben", "ANA"]}', "2:solution.assignment[2]"),
    ("oa-text", '{"assignment": ["ana", " ben", "ben"]}', "2:solution.assignment[1]"),
    ("oa-text", '{"assignment": ["ana", "ben", 1]}', "2:solution.assignment[2]"),
    ("oa-text", '{"assignment": ["ana", null, "ben"]}', 5),  # documented: not assigned
    ("os", '{"selected": ["p1", "p1"], "assignment": ["ana", "ben"]}', "2:solution.selected[1]"),
    ("os", '{"selected": ["p1", "p2"], "assignment": ["ana"]}', "2:solution.assignment"),
    ("os", '{"selected": [0, 1], "assignment": ["ana", "ben"]}', "2:solution.selected[0]"),
    ("os", '{"selected": ["p1"], "assignment": [0]}', "2:solution.assignment[0]"),
    ("os", '{"selected": ["p3"], "assignment": ["ana"]}', 0),
    ("ls", '{"selected": [-1]}', "2:solution.selected[0]"),
    ("ls", '{"selected": [5]}', "2:solution.selected[0]"),
    ("ls", '{"selected": [0, 0, 1]}', "2:solution.selected[1]"),
    ("ls", '{"selected": [false]}', "2:solution.selected[0]"),
    ("ls", '{"selected": ["0"]}', "2:solution.selected[0]"),
    ("ls", '{"selected": [0], "task_of": [[0]]}', "2:solution.task_of"),
    ("ls", '{"selected": [0], "size": 1}', "2:solution.size"),
    ("ls", '{"selected": [2, 0, 1]}', 0),
    ("ls-mixed", '{"selected": [1]}', 0),
    ("ls-mixed", '{"selected": ["1", 1, "x"]}', 0),
    ("ls-mixed", '{"selected": [1.0]}', "2:solution.selected[0]"),
    ("ws", '{"selected": [9, 7], "size": 5}', "2:solution.size"),
    ("ws", '{"selected": [9, 7], "size": "2"}', "2:solution.size"),
    ("ws", '{"selected": [9, 7], "size": 2.0}', "2:solution.size"),
    ("ws", '{"selected": [2, 0]}', "2:solution.selected[0]"),
    ("ws", '{"selected": [9, 7, 9]}', "2:solution.selected[2]"),
    ("ws", '{"selected": [9, 7], "size": 2}', 0),
    ("ct", '{"task_of": [[-1], []]}', "2:solution.task_of[0][0]"),
    ("ct", '{"task_of": [[null, 1], []]}', "2:solution.task_of[0][0]"),
    ("ct", '{"task_of": [[0, 0], []]}', "2:solution.task_of[0][1]"),
    ("ct", '{"task_of": [[3], []]}', "2:solution.task_of[0][0]"),
    ("ct", '{"task_of": [[0], [], []]}', "2:solution.task_of"),
    ("ct", '{"task_of": [[0, 1, 2, 0], []]}', "2:solution.task_of[0][3]"),
    ("ct", '{"task_of": [[true], []]}', "2:solution.task_of[0][0]"),
    ("ct", '{"task_of": {"0": [1]}}', "2:solution.task_of"),
    ("ct", '{"task_of": [[2, 0], [1]]}', 0),
    ("ls", "null", "2:solution"),
    ("ls", "[]", "2:solution"),
    ("ls", '"selected"', "2:solution"),
    ("ls", "0", "2:solution"),
    ("ls", "", "2:solution"),
    ("ls", '{"selected": [0], "selected": [1]}', "2:unique keys"),
    ("ls", '{"problem": "cltap", "solution": {"task_of": []}}', "2:solution.problem"),
    ("ls", '{"problem": "labeler-set", "solution": null, "status": "time_limit"}',
     "2:solution"),
    ("ls", '\ufeff{"selected": [1]}', 0),
]

# instance files whose ids break the id rule (labeler-set, labeler_ids)
BAD_IDS = ['""', '" "', '"a\\u0000"', '"a\\nb"', '"\\u202eab"', '"\\u2067x"', '"x\\u0085"',
           str(2**63), str(2**64), str(-(2**53) - 1), "true", "1.5", "null", '["a"]', '"a"']


def _run(capsys, argv: list[str]) -> tuple[int, str, list[str]]:
    code = main(argv)
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err, (argv, cap.err)
    return code, cap.out, [ln for ln in cap.err.splitlines() if ln.strip()]


def _expect(outcome, code: int, out: str, err: list[str], what) -> None:
    if isinstance(outcome, str) and outcome.startswith("2:"):
        assert code == 2 and out == "" and len(err) == 1, (what, code, out, err)
        assert outcome[2:] in err[0], (what, err)
    else:
        assert code == outcome, (what, code, err)


@pytest.fixture
def files(tmp_path):
    for name, doc in INSTANCES.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
    return tmp_path


@pytest.mark.parametrize("case", range(len(SOLUTIONS)))
def test_solution_files(case, files, capsys):
    inst, text, outcome = SOLUTIONS[case]
    sol = files / "sol.json"
    sol.write_text(text, encoding="utf-8")
    code, out, err = _run(capsys, ["certify", str(files / f"{inst}.json"), "--solution",
                                   str(sol), "--time-limit", "60"])
    _expect(outcome, code, out, err, (inst, text))


@pytest.mark.parametrize("bad", BAD_IDS)
def test_instance_ids(bad, tmp_path, capsys):
    path = tmp_path / "i.json"
    path.write_text('{"problem": "labeler-set", "schema_version": 1, "qualities": [0.9, 0.8], '
                    f'"labeler_ids": ["a", {bad}]}}')
    code, out, err = _run(capsys, ["solve", str(path)])
    _expect("2:labeler_ids", code, out, err, bad)


LABEL_FILES = {
    # name: (label file, outcome, expected classes)
    "1 and 1.0": ("t1,w1,1\nt1,w2,1.0\nt2,w1,0\nt2,w2, 1\n", 0, [0, 1]),
    "01 and +1 and 1e0": ("t1,w1,01\nt1,w2,+1\nt2,w1,1e0\nt2,w2,0\n", 0, [0, 1]),
    "1 and 1.0 beside yes": ("t1,w1,1\nt1,w2,1.0\nt2,w1,yes\n", "2:label", None),
    "0 and 0.0 beside no": ("t1,w1,0\nt1,w2,0.0\nt2,w1,no\nt2,w2,no\n", "2:label", None),
    "padded text": ("t1,w1,yes\nt1,w2, yes\nt2,w1,no \n", 0, ["no", "yes"]),
    "True/False text": ("t1,w1,True\nt1,w2,False\nt2,w1,True\n", 0, ["False", "True"]),
    "NUL in a label": ("t1,w1,yes\x00\nt1,w2,no\n", "2:U+0000", None),
    "bidi in a label": ("t1,w1,y\u202ees\nt1,w2,no\n", "2:U+202E", None),
    "bidi in a worker": ("t1,w\u2066,yes\nt1,w2,no\n", "2:U+2066", None),
    "NUL in a task": ("t\x001,w1,yes\nt1,w2,no\n", "2:U+0000", None),
    "blank worker": ("t1, ,yes\nt1,w2,no\n", "2:worker", None),
    "NA label": ("t1,w1,NA\nt1,w2,no\n", "2:label", None),
    "inf among numbers": ("t1,w1,1\nt1,w2,inf\n", "2:label", None),
}


@pytest.mark.parametrize("name", list(LABEL_FILES))
def test_label_files(name, tmp_path, capsys):
    text, outcome, classes = LABEL_FILES[name]
    path = tmp_path / "l.csv"
    path.write_bytes(("task,worker,label\n" + text).encode())
    code, out, err = _run(capsys, ["aggregate", str(path), "--method", "mv", "--json"])
    _expect(outcome, code, out, err, name)
    if code == 0:
        assert json.loads(out)["classes"] == classes


def test_gold_by_the_table_rule(tmp_path, capsys):
    (tmp_path / "l.csv").write_text("task,worker,label\nt1,w1,1\nt1,w2,1\nt2,w1,0\nt2,w2,0\n")
    (tmp_path / "g.csv").write_text("task,label\nt1,1.0\nt2, 0\n")
    code, out, err = _run(capsys, ["aggregate", str(tmp_path / "l.csv"), "--gold",
                                   str(tmp_path / "g.csv"), "--method", "mv", "--json"])
    assert code == 0 and json.loads(out)["accuracy"] == 1.0
    (tmp_path / "g2.csv").write_text("task,label\nt1,yes\n")
    code, out, err = _run(capsys, ["aggregate", str(tmp_path / "l.csv"), "--gold",
                                   str(tmp_path / "g2.csv"), "--method", "mv"])
    _expect("2:label", code, out, err, "gold outside the classes")


def _small_table(tmp_path) -> str:
    rows = "".join(f"t{t},{w},{(t + (w == 'c')) % 2}\n" for t in range(12) for w in "abcd")
    (tmp_path / "s.csv").write_text("task,worker,label\n" + rows)
    return str(tmp_path / "s.csv")


# the small table: 12 tasks of 4 labels, 5 testers: a run that answers every task within its
# budget needs (5 x 4 + 7) / 12 = 2.25 labels per task
@pytest.mark.parametrize("budget, outcome", [("0", "2:--budget"), ("0.5", "2:--budget"),
                                             ("1e-300", "2:--budget"), ("-1", "2:--budget"),
                                             ("nan", "2:--budget"),
                                             ("1", "2:budget: expected a number >= 2.25"),
                                             ("2.25", 0), ("2.5", 0)])
def test_lsol_replay_budgets(budget, outcome, tmp_path, capsys):
    code, out, err = _run(capsys, ["replay", "lsol", _small_table(tmp_path), "--budget", budget,
                                   "--runs", "1", "--json"])
    _expect(outcome, code, out, err, budget)
    if code == 0:
        assert json.loads(out)["budget"] == float(budget)


@pytest.mark.parametrize("argv, outcome", [
    (["simulate", "optkg", "--model", "heterogeneous", "--policies", "kos", "--K", "20",
      "--budgets", "19", "--runs", "1"], "2:--budgets"),
    (["simulate", "optkg", "--model", "heterogeneous", "--policies", "kos", "--K", "20",
      "--M", "10", "--budgets", "20", "--runs", "1", "--json"], 0),
    (["generate", "olas-assign", "--param", "points=5", "--param", "points=6"], "2:--param"),
    (["generate", "olas-assign", "--param", "points=5", "--param", " points=6"], "2:--param"),
    (["schema", "--list", "result"], "2:NAME"),
    (["schema", "solution-cltap", "extra"], "2:extra"),
    (["solve", "{d}/ls.json", "{d}/ls.json"], "2:unrecognized"),
    (["compare", "{d}/ls.json", "--algorithms", "top-k", "top-k"], "2:algorithms"),
    (["solve", "{d}/ls.json", "--time-limit", "0"], "2:--time-limit"),
    (["solve", "{d}/ls.json", "--time-limit", "inf"], "2:--time-limit"),
    (["solve", "{d}/ls.json", "--time-limit", "1e400"], "2:--time-limit"),
    (["certify", "{d}/ls.json", "--method-time-limit", "-5"], "2:--method-time-limit"),
    (["solve", "{d}/oa-int.json", "--method", "milp-epigraph", "--time-limit", "1e308"], 0),
    (["solve", "{d}/oa-int.json", "--method", "milp-epigraph", "--time-limit", "31536000"], 0),
    (["certify", "{d}/ls.json", "--time-limit", "1e308", "--method-time-limit", "1e308"], 0),
    (["compare", "{d}/ls.json", "--time-limit", "1e-9"], 4),
    (["compare", "{d}/oa-int.json", "--time-limit", "1e-12", "--json"], 4),
])
def test_arguments_limits_and_budgets(argv, outcome, files, capsys):
    argv = [a.format(d=files) for a in argv]
    code, out, err = _run(capsys, argv)
    _expect(outcome, code, out, err, argv)
    if "--json" in argv and code in (0, 4):
        json.loads(out)  # one document
    if code == 4:
        assert len(err) == 1 and "no method ran" in err[0]


def test_a_limit_of_1e308_is_not_waited_for(tmp_path):
    """CL-TAP certify with per-method and overall limits of 1e308 ends (it ran forever: the
    local search took the per-method limit as its run length)."""
    inst = tmp_path / "c.json"
    assert main(["generate", "cltap", "--param", "t=10", "-o", str(inst)]) == 0
    r = subprocess.run([sys.executable, "-m", "crowdopt", "certify", str(inst),
                        "--method-time-limit", "1e308", "--time-limit", "1e308", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode in (0, 4) and "Traceback" not in r.stderr
    assert json.loads(r.stdout)["details"]["time_limit_s"] is None


def test_python_api_cases(tmp_path):
    inst = crowdopt.load(INSTANCES["ws"])
    for bad in ({"selected": [True]}, {"selected": [0, 1]}, {"selected": [9], "size": 2},
                {"selected": ["9"]}, [9, 7]):
        with pytest.raises(crowdopt.InputError) as err:
            crowdopt.certify(inst, bad)
        assert "\n" not in str(err.value) and str(err.value).startswith("solution")
    (tmp_path / "null.json").write_text("null")
    with pytest.raises(crowdopt.InputError, match="^solution: .*found null"):
        crowdopt.read_solution(inst, str(tmp_path / "null.json"))
    with pytest.raises(crowdopt.InputError, match="^solution:"):
        crowdopt.certify(inst, str(tmp_path / "null.json"))  # a path is not a solution
    assert crowdopt.read_solution(inst, {"selected": [10, 7]}).selected.tolist() == [0, 3]
    with pytest.raises(crowdopt.InputError, match="^algorithms:"):
        crowdopt.compare(inst, algorithms=[])
    with pytest.raises(crowdopt.InputError, match="^time_limit:"):
        crowdopt.solve(inst, time_limit=float("inf"))
    assert crowdopt.solve(inst, "exact", time_limit=1e308).proven_optimal
    for labels in (["1", "1.0", "yes"], [True, False, True], ["a", "b\x00", "a"],
                   ["a", "", "b"]):
        with pytest.raises(crowdopt.InputError):
            crowd.from_arrays(["t1", "t2", "t3"], ["w", "w", "w"], labels)
    tb = crowd.from_arrays(["t1", "t2", "t3"], ["w", "w", "w"], [1, "1.0", " 0"])
    assert tb.classes.tolist() == [0, 1]
    with pytest.raises(crowdopt.InputError, match=r"^task\[1\]"):
        crowd.from_arrays(["t1", 2**63], ["w", "w"], [0, 1])
    assert Path(tmp_path).exists()
