"""Every input means one thing: the label rule, the id rule, time limits, label budgets and
command-line arguments, one property test per rule (`make test` a sample, `make soak` more),
and a named test for each case that used to change meaning without a word.

- Labels: a column of numbers (in any spelling: '1', ' 1', '1.0', '01', 1, 1.0) is one class
  per value; any other column compares as trimmed text, where two spellings of one number are
  refused; the same through from_arrays, from_dataframe and read_labels.
- Ids and labels: control characters and bidi overrides/isolates are refused, blank ids too,
  integer ids within 2^53, booleans are no ids.
- Time limits: a year (31,536,000 s) or more is no limit (None downstream, never 1e308); a
  run in which no method ran exits 4 with the reason.
- Budgets: a per-task label budget below 1, and a KOS budget below one label per task, are
  refused in one line.
- Arguments: a repeated --param, an extra positional argument, `schema --list NAME` and an
  empty `algorithms` list are refused.
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
from cli_tree import leaves
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt.cli import build_parser, main
from crowdopt.crowd import tables as T
from crowdopt.errors import InputError

SAMPLE, SOAK = 40, 300
YEAR = 31_536_000.0  # validate.NO_LIMIT_S
FORBIDDEN = ["\x00", "\n", "\r", "\t", "\x1b", "\x7f", "\x85", "\u2028", "\u2029",
             *map(chr, range(0x202A, 0x202F)), *map(chr, range(0x2066, 0x206A))]
WORDS = st.text(alphabet="abcxyzé- ", min_size=1, max_size=6).filter(
    lambda s: s.strip() and T._label_number(s.strip()) is None)


def _one_line(exc: pytest.ExceptionInfo, field: str) -> str:
    msg = str(exc.value)
    assert "\n" not in msg and field in msg.split(":")[0] + ":" + msg.split(":")[1], msg
    return msg


def _routes(tmp_path, labels: list) -> dict:
    """The classes of one label column by every route (texts only where a file is written)."""
    n = len(labels)
    tasks, workers = [f"t{i}" for i in range(n)], ["w"] * n
    out = {"from_arrays": T.from_arrays(tasks, workers, labels).classes.tolist()}
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"task": tasks, "worker": workers, "label": pd.Series(labels, dtype=object)})
    out["from_dataframe"] = T.from_dataframe(df).classes.tolist()
    if all(isinstance(v, str) for v in labels):
        p = tmp_path / "labels.csv"
        p.write_text("task,worker,label\n" + "".join(f"{t},w,\"{v}\"\n"
                                                      for t, v in zip(tasks, labels)))
        out["read_labels"] = T.read_labels(p).classes.tolist()
    return out


def _spell(v: int | float, how: int) -> object:
    """One of many spellings of the number v (texts and Python numbers)."""
    if how == 0:
        return v
    if how == 1:
        return float(v)
    if how == 2:
        return f"{v}"
    if how == 3:
        return f" {float(v)!r} "
    if how == 4:
        return f"+{v}" if v >= 0 else f"{v}"
    if how == 5:
        return f"{v:.3f}"
    return f"{float(v):e}"


@st.composite
def numeric_columns(draw):
    values = draw(st.lists(st.sampled_from([0, 1, 2, -3, 0.5, 2.25, 10**12]), min_size=1,
                           max_size=8))
    cells = [_spell(v, draw(st.integers(0, 6))) for v in values]
    return values, cells


def _numbers_rule(data, tmp_path) -> None:
    values, cells = data.draw(numeric_columns())
    want = sorted(set(values))
    for route, classes in _routes(tmp_path, cells).items():
        assert classes == want, (route, cells, classes)
        assert all(type(c) is int for c in classes if float(c).is_integer())


@st.composite
def text_columns(draw):
    words = draw(st.lists(WORDS, min_size=1, max_size=6))
    numbers = draw(st.lists(st.sampled_from([1, 2, 7]), max_size=3, unique=True))
    cells = [draw(st.sampled_from(["", " ", "  "])) + w + draw(st.sampled_from(["", " "]))
             for w in words] + [str(n) for n in numbers]
    return cells, sorted({w.strip() for w in words} | {str(n) for n in numbers}), numbers


def _text_rule(data, tmp_path) -> None:
    cells, want, numbers = data.draw(text_columns())
    for route, classes in _routes(tmp_path, cells).items():
        assert classes == want, (route, cells, classes)
    if numbers:  # another spelling of one of them beside text: refused, never a class
        n = data.draw(st.sampled_from(numbers))
        bad = cells + [data.draw(st.sampled_from([f"{n}.0", f"0{n}", f"+{n}", f" {n}.00 "]))]
        with pytest.raises(InputError) as err:
            T.from_arrays(list(range(len(bad))), ["w"] * len(bad), bad)
        assert "\n" not in str(err.value) and "label" in str(err.value).split(":")[0]


def _forbidden_rule(data) -> None:
    ch = data.draw(st.sampled_from(FORBIDDEN))
    word = "a" + data.draw(WORDS).strip() + "z"
    role = data.draw(st.sampled_from(["task", "worker", "label"]))
    # a label is trimmed first (a line break at its edge is whitespace); ids are as given
    pos = data.draw(st.integers(1, len(word) - 1) if role == "label" else
                    st.integers(0, len(word)))
    bad = word[:pos] + ch + word[pos:]
    cols = {"task": ["a", "b"], "worker": ["w", "v"], "label": ["x", "y"]}
    cols[role] = [cols[role][0], bad]
    with pytest.raises(InputError) as err:
        T.from_arrays(cols["task"], cols["worker"], cols["label"])
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(f"{role}[1]:") and "U+" in msg, msg


@settings(max_examples=SAMPLE, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_a_column_of_numbers_is_one_class_per_value_by_every_route(data, tmp_path):
    _numbers_rule(data, tmp_path)


@settings(max_examples=SAMPLE, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_other_column_is_trimmed_text_by_every_route(data, tmp_path):
    _text_rule(data, tmp_path)


@settings(max_examples=SAMPLE, deadline=None)
@given(data=st.data())
def test_control_and_bidi_characters_are_refused_in_ids_and_labels(data):
    _forbidden_rule(data)


@pytest.mark.soak
@settings(max_examples=SOAK, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_soak_label_rules(data, tmp_path):
    _numbers_rule(data, tmp_path)
    _text_rule(data, tmp_path)
    _forbidden_rule(data)


def test_one_and_one_point_zero_are_one_class_by_every_route(tmp_path):
    """A binary table spelled '1', '1.0', ' 1' and '0' has 2 classes, not 3 (from_arrays and
    from_dataframe kept '1' and '1.0' apart); a NUL in a label is refused, not a class."""
    cells = ["1", "1.0", " 1", "0"]
    for route, classes in _routes(tmp_path, cells).items():
        assert classes == [0, 1], route
    with pytest.raises(InputError, match=r"label\[1\].*U\+0000"):
        T.from_arrays(["a", "b"], ["w", "w"], ["1", "1\x00"])
    p = tmp_path / "nul.csv"
    p.write_bytes(b"task,worker,label\na,w,1\nb,w,yes\x00\n")
    with pytest.raises(InputError, match="U\\+0000"):
        T.read_labels(p)


def test_gold_labels_follow_the_table_rule(tmp_path):
    tb = T.from_arrays(["a", "b"], ["w", "w"], ["1", "0"])
    g = T.gold_from_arrays(tb, ["a", "b"], ["1.0", 0.0])
    assert g.label.tolist() == [1, 0]
    text = T.from_arrays(["a", "b"], ["w", "w"], ["yes", "1"])
    assert T.gold_from_arrays(text, ["a", "b"], [" yes", 1]).label.tolist() == [1, 0]
    with pytest.raises(InputError, match="gold"):
        T.gold_from_arrays(text, ["b"], ["1.0"])  # '1.0' is no class of a text column
    with pytest.raises(InputError, match=r"gold label\[0\]"):
        T.gold_from_arrays(text, ["b"], ["1\u202e"])


@pytest.mark.parametrize("bad, field", [
    ("", "labeler_ids[1]"), (" ", "labeler_ids[1]"), ("a\x00b", "labeler_ids[1]"),
    ("a\nb", "labeler_ids[1]"), ("\u202eab", "labeler_ids[1]"), ("x\u2066", "labeler_ids[1]"),
    (2**63, "labeler_ids[1]"), (2**64, "labeler_ids[1]"), (-(2**53) - 1, "labeler_ids[1]"),
    (True, "labeler_ids[1]"), (1.5, "labeler_ids[1]"),
])
def test_instance_ids_by_the_id_rule(bad, field):
    with pytest.raises(InputError) as err:
        crowdopt.LabelerSetInstance.from_arrays([0.8, 0.7], labeler_ids=["a", bad])
    assert str(err.value).startswith(field + ":") and "\n" not in str(err.value)
    doc = {"problem": "worker-select", "max_workers": 1, "scores": [1, 2],
           "worker_ids": ["a", bad]}
    with pytest.raises(InputError, match=r"^worker_ids\[1\]:"):
        crowdopt.load(doc)
    ok = crowdopt.LabelerSetInstance.from_arrays([0.8, 0.7], labeler_ids=[2**53, -(2**53)])
    assert ok.labeler_ids == [2**53, -(2**53)]


@pytest.mark.parametrize("role", ["task", "worker"])
@pytest.mark.parametrize("bad", [" ", "", 2**60, True, "\u202eq"])
def test_label_table_ids_by_the_id_rule(role, bad):
    cols = {"task": ["a", bad], "worker": ["w", bad], "label": [0, 1]}
    other = {"task": "worker", "worker": "task"}[role]
    cols[other] = cols[other][:1] * 2
    with pytest.raises(InputError) as err:
        T.from_arrays(cols["task"], cols["worker"], cols["label"])
    assert str(err.value).startswith(f"{role}[1]:"), str(err.value)


# ----------------------------------------------------------------------------- time limits
@settings(max_examples=SAMPLE, deadline=None)
@given(st.floats(min_value=YEAR, max_value=1e308), st.floats(min_value=1e-9, max_value=YEAR,
                                                             exclude_max=True))
def test_a_year_or_more_is_no_limit(big, small):
    from crowdopt.validate import time_limit

    assert time_limit(big, "t") is None and time_limit(small, "t") == small
    opts = crowdopt.registry.RunOptions.with_limit(big)
    assert opts.time_limit is None and opts.no_time_limit
    assert crowdopt.registry.RunOptions.with_limit(None).no_time_limit is False


def test_no_limit_reaches_no_method_as_1e308():
    inst = crowdopt.generate("olas-assign", seed=1)
    r = crowdopt.solve(inst, "milp-epigraph", time_limit=1e308)
    assert r.proven_optimal and "time_limit_s" not in r.certificate.details
    comp = crowdopt.compare(inst, time_limit=1e308, total_time_limit=1e308, warmup=False)
    assert all(r.details.get("time_limit_s") in (None,) for r in comp)
    cert = crowdopt.certify(inst, time_limit=1e308, total_time_limit=1e308)
    assert cert.details["total_time_limit_s"] is None and cert.details["time_limit_s"] is None


def test_a_run_where_no_method_ran_exits_4_with_the_reason(tmp_path, capsys):
    inst = tmp_path / "i.json"
    assert main(["generate", "olas-assign", "-o", str(inst)]) == 0
    capsys.readouterr()
    assert main(["compare", str(inst), "--time-limit", "1e-9", "--json"]) == 4
    cap = capsys.readouterr()
    doc = json.loads(cap.out)
    assert {r["status"] for r in doc["results"]} == {"skipped"}
    assert cap.err.count("\n") == 1 and "no method ran" in cap.err and "1e-09" in cap.err


def test_certify_with_limits_of_1e308_ends_and_records_no_limit(tmp_path, capsys):
    inst = tmp_path / "i.json"
    assert main(["generate", "olas-assign", "-o", str(inst)]) == 0
    capsys.readouterr()
    assert main(["certify", str(inst), "--time-limit", "1e308", "--method-time-limit", "1e308",
                 "--json"]) == 0
    cert = json.loads(capsys.readouterr().out)
    assert cert["details"]["total_time_limit_s"] is None
    assert cert["details"]["time_limit_s"] is None


# ----------------------------------------------------------------------------- label budgets
def _table_file(tmp_path) -> tuple[str, str]:
    rng = np.random.default_rng(0)
    rows = [f"t{i},w{j},{int(rng.random() < 0.8)}" for i in range(40) for j in range(5)]
    (tmp_path / "l.csv").write_text("task,worker,label\n" + "\n".join(rows) + "\n")
    (tmp_path / "g.csv").write_text("task,label\n" + "".join(f"t{i},1\n" for i in range(40)))
    return str(tmp_path / "l.csv"), str(tmp_path / "g.csv")


@settings(max_examples=SAMPLE, deadline=None)
@given(st.floats(min_value=0.0, max_value=1.0, exclude_max=True), st.floats(1.0, 1e6))
def test_a_per_task_budget_below_one_label_is_refused(low, ok):
    from crowdopt.validate import labels_per_task

    with pytest.raises(InputError, match="^b: expected a number >= 1"):
        labels_per_task(low, "b")
    assert labels_per_task(ok, "b") == ok


@pytest.mark.parametrize("budget", ["0", "0.5", "1e-300", "0.999"])
def test_replay_lsol_refuses_a_budget_below_one_label_per_task(budget, tmp_path, capsys):
    labels, gold = _table_file(tmp_path)
    capsys.readouterr()
    assert main(["replay", "lsol", labels, "--gold", gold, "--budget", budget]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--budget" in err and ">= 1" in err


def test_replay_lsol_budget_in_python_and_its_default():
    from crowdopt.sim.lsol_replay import replay

    tb = T.from_arrays([i // 2 for i in range(40)], [i % 2 for i in range(40)],
                       [i % 2 for i in range(40)])
    with pytest.raises(InputError, match="^budget:"):
        replay(tb, None, exploit="sequential", budget=0.5)
    # 2 labels per task: a third is 2/3, raised to what the run needs to answer every task, its
    # 6 testers of 2 labels and one label for each of the other 14 tasks: 26/20
    r = replay(tb, None, exploit="sequential")
    assert r["budget"] == 1.3 and r["labels_spent"] <= 26


def test_kos_needs_one_label_per_task(capsys):
    from crowdopt.policies.kos_baseline import biregular_graph

    with pytest.raises(InputError, match="^budget: expected an integer >= 50"):
        biregular_graph(50, 10, 49, np.random.default_rng(0))
    assert main(["simulate", "optkg", "--model", "heterogeneous", "--policies", "kos",
                 "--budgets", "10", "--K", "50", "--runs", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--budgets" in err


# ----------------------------------------------------------------------------- arguments
def test_a_repeated_param_is_refused(capsys):
    assert main(["generate", "olas-assign", "--param", "points=5", "--param", "points=6"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--param points" in err and "points=6" in err
    assert main(["generate", "olas-assign", "--param", "points=5", "--param",
                 "labelers=2"]) == 0


def test_schema_list_with_a_name_is_refused(capsys):
    assert main(["schema", "--list", "extra"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_compare_algorithms_must_name_each_algorithm_once():
    inst = crowdopt.generate("olas-assign")
    for bad in ([], (), ["sorted", "sorted"]):
        with pytest.raises(InputError, match="^algorithms:"):
            crowdopt.compare(inst, algorithms=bad, warmup=False)
    assert [r.algorithm for r in crowdopt.compare(inst, algorithms=["sorted"],
                                                  warmup=False)] == ["sorted"]


def _positionals(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not a.option_strings
            and not isinstance(a, argparse._SubParsersAction)]


def test_every_command_refuses_an_extra_positional_argument(capsys, tmp_path):
    """Every leaf command with its positionals filled and one word more: argparse refuses the
    word, or (a list of names, schema --list) the command refuses it by name."""
    parser = build_parser()
    swallowed = []
    n = 0
    for path, p, _ in leaves(parser):
        if any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            continue
        required = [a for a in p._actions if a.option_strings and a.required]
        for a in required:  # the required options are not what this test is about
            a.required = False
        try:
            _, extra = p.parse_known_args(["x" for _ in _positionals(p)] + ["EXTRA-WORD"])
        finally:
            for a in required:
                a.required = True
        if extra != ["EXTRA-WORD"]:
            swallowed.append(path)
        n += 1
    assert n > 30
    # the commands that take a list of words check each one
    assert set(swallowed) <= {("datasets", "list"), ("datasets", "info"), ("datasets", "fetch"),
                              ("datasets", "verify"), ("datasets", "path")}, swallowed
    for path in swallowed:
        capsys.readouterr()
        assert main([*path, "bluebirds", "EXTRA-WORD"]) == 2, path
        assert "EXTRA-WORD" in capsys.readouterr().err
    assert main(["schema", "--list", "EXTRA-WORD"]) == 2
    assert main(["solve", str(tmp_path / "i.json"), "EXTRA-WORD"]) == 2  # argparse's own
    assert "unrecognized arguments: EXTRA-WORD" in capsys.readouterr().err


def test_a_time_limit_is_still_a_finite_positive_number(capsys):
    for bad in ("0", "-1", "nan", "inf", "1e400"):
        assert main(["solve", "x.json", "--time-limit", bad]) == 2
        assert capsys.readouterr().err.count("\n") == 1
    from crowdopt.validate import NO_LIMIT_S

    assert math.isfinite(NO_LIMIT_S) and NO_LIMIT_S == YEAR == 365 * 24 * 3600
