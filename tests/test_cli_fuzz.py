"""Issue 19 item 11: bad input never gives a traceback nor a silent reinterpretation.

Every leaf command (found by walking the argparse tree) gets bad values for each of its numeric
options and bad output paths; the cases the issue lists are checked one by one. Each must exit
2 with exactly one line on stderr, before any work starts.
"""

from __future__ import annotations

import argparse

import pytest
from cli_tree import leaves, options

from crowdopt.cli import main
from crowdopt.cliargs import OUTPUTS

NUMERIC = ("nonneg_int", "nonneg_float", "positive_int", "positive_float")


def _run(capsys, argv: list[str]) -> tuple[int, list[str]]:
    try:
        code = main(argv)
    except SystemExit as exc:  # pragma: no cover - main returns its code
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, (argv, err)
    return code, [ln for ln in err.splitlines() if ln.strip() and "%|" not in ln]


def _leaf_options():
    for path, p, _ in leaves():
        if any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            continue
        for a in options(p):
            if a.option_strings:
                yield path, a


def _numeric_cases():
    for path, a in _leaf_options():
        if getattr(a.type, "__name__", "") in NUMERIC and a.nargs is None:
            for bad in ("x", "-1", "nan"):
                yield pytest.param([*path, a.option_strings[-1], bad],
                                   id=f"{' '.join(path)} {a.option_strings[-1]} {bad}")


def _output_cases(tmp):
    d, f = tmp / "adir", tmp / "afile"
    for path, a in _leaf_options():
        if a.dest in OUTPUTS:
            flag = a.option_strings[-1]
            if a.metavar == "FILE":
                yield [*path, flag, str(d)]
                yield [*path, flag, str(tmp / "missing" / "x.json")]
            elif a.metavar == "DIR":
                yield [*path, flag, str(f)]


def test_every_numeric_option_is_validated(capsys):
    cases = list(_numeric_cases())
    assert len(cases) > 100
    for case in cases:
        argv = case.values[0]
        code, err = _run(capsys, argv)
        assert code == 2 and len(err) == 1, (argv, code, err)


def test_every_output_path_is_validated(tmp_path, capsys):
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile").write_text("x")
    cases = list(_output_cases(tmp_path))
    assert len(cases) > 20
    for argv in cases:
        code, err = _run(capsys, argv)
        assert code == 2 and len(err) == 1, (argv, code, err)


def test_every_option_has_a_checked_type_or_choices():
    """No free-typed numeric option slips past the boundary rule (a new `type=int` is
    rewritten by apply_boundary_types; a custom type must be a named function)."""
    for path, a in _leaf_options():
        assert a.type not in (int, float), (path, a.option_strings)


@pytest.fixture
def files(tmp_path):
    (tmp_path / "h.csv").write_text("task,worker,label\nt1,w1,a\nt1,w2,b\nt2,w1,a\n")
    (tmp_path / "g.csv").write_text("task,label\nt1,a\nt2,a\n")
    golden = ("sample,labeler,labeler_accuracy,given_label,true_label,entropy\n"
              "s1,A,0.8,1,1,0.2\ns1,B,0.7,yes,1,0.2\ns2,A,0.8,0,0,0.5\n")
    (tmp_path / "golden.csv").write_text(golden)
    (tmp_path / "inst.json").write_text('{"problem": "cltap", "t": 3, "t": 4}')
    return tmp_path


ISSUE_CASES = {
    "generate --seed -1": (["generate", "cltap", "--seed", "-1"], "--seed"),
    "replay lsol --runs 0": (["replay", "lsol", "bluebirds", "--runs", "0"], "--runs"),
    "reproduce optkg --only ''": (["reproduce", "optkg", "--only", "", "-o", "{t}/r"], "--only"),
    "simulate lsol --M 5 --p 2 values": (["simulate", "lsol", "--M", "5", "--p", "0.9,0.8"],
                                         "--p"),
    "simulate lsol --cost -1": (["simulate", "lsol", "--cost", "-1"], "--cost"),
    "generate points=0": (["generate", "olas-assign", "--param", "points=0"], "points"),
    "aggregate --no-header on a header": (["aggregate", "{t}/h.csv", "--no-header"], "header"),
    "estimate --no-header on a header": (["estimate", "{t}/h.csv", "--gold", "{t}/g.csv",
                                          "--no-header"], "header"),
    "estimate-noise label outside the classes": (["olas", "estimate-noise", "--golden",
                                                  "{t}/golden.csv"], "given_label"),
    "estimate-noise --folds 0": (["olas", "estimate-noise", "--golden", "{t}/golden.csv",
                                  "--folds", "0"], "--folds"),
    "aggregate --folds 0": (["aggregate", "{t}/h.csv", "--method", "wmv", "--gold", "{t}/g.csv",
                             "--folds", "0"],
                            "folds"),
    "select --n-control 1000": (["select", "dataset:bluebirds", "--max-workers", "5",
                                 "--n-control", "1000"], "--n-control"),
    "duplicated key in an instance": (["solve", "{t}/inst.json"], "unique keys"),
    "simulate optkg --theta-dist 0,0": (["simulate", "optkg", "--theta-dist", "0,0"],
                                        "--theta-dist"),
    "simulate lsol --types 0": (["simulate", "lsol", "--contexts", "finite", "--types", "0"],
                                "--types"),
}


@pytest.mark.parametrize("name", list(ISSUE_CASES))
def test_issue_cases_exit_2_with_one_line(name, files, capsys, data_dir):
    argv, needle = ISSUE_CASES[name]
    code, err = _run(capsys, [a.format(t=files) for a in argv])
    assert code == 2 and len(err) == 1 and needle in err[0], (name, code, err)


def test_non_zero_exits_say_why(tmp_path, capsys):
    inst = str(tmp_path / "i.json")
    main(["generate", "cltap", "-o", inst])
    capsys.readouterr()
    code, err = _run(capsys, ["solve", inst, "--method", "exact", "--time-limit", "1e-9"])
    assert code == 4 and len(err) == 1 and "time limit" in err[0]


def test_bom_is_accepted_in_golden_csv_and_sweep_toml(tmp_path, capsys):
    golden = ("\ufeffsample,labeler,labeler_accuracy,given_label,true_label,entropy\n"
              + "".join(f"s{i},L{i % 3},{0.6 + 0.1 * (i % 3):.1f},{(i * 7) % 2},{(i * 5) % 2},"
                        f"{(i % 10) / 10:.1f}\n" for i in range(40)))
    (tmp_path / "golden.csv").write_text(golden, encoding="utf-8")
    assert main(["olas", "estimate-noise", "--golden", str(tmp_path / "golden.csv"),
                 "--json"]) == 0
    (tmp_path / "s.toml").write_text('\ufefffunction = "crowdopt.experiments.executor:busy_task"'
                                     '\nseeds = [0]\n[grid]\nwork = [10]\n', encoding="utf-8")
    assert main(["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "o"), "--quiet"]) == 0
