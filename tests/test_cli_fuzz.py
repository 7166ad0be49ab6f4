"""Bad input never gives a traceback nor a silent reinterpretation, class by class.

One generator per class of bad input, over every command where the class applies (leaf
commands found by walking the argparse tree): numbers on the command line (non-numbers,
negatives, nan, inf, 1e400, a 400-digit and a 5,000-digit integer), numbers inside strings
(comma lists, 'logistic:w0,we,wa'), numbers in instance documents (NaN/Infinity literals and
integers of any size in every numeric field), paths whose folder is missing (every path
option), --sep variants, missing and numeric labels in label files, CSV fields over 128 KB,
sweep sizes, campaign arguments, and the Python API's own arguments and array-likes. Each
case exits 2 with exactly one line on stderr (or raises InputError), before any work starts,
or gives the sensible answer the class documents.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import pytest
from cli_tree import leaves, options

import crowdopt
from crowdopt import crowd
from crowdopt.cli import build_parser, main
from crowdopt.cliargs import OUTPUTS
from crowdopt.errors import InputError

NUMERIC = ("nonneg_int", "nonneg_float", "positive_int", "positive_float", "limit_seconds")


def _run(capsys, argv: list[str]) -> tuple[int, list[str]]:
    return _run_out(capsys, argv)[:2]


def _run_out(capsys, argv: list[str]) -> tuple[int, list[str], str]:
    """main(argv): exit code, stderr lines (progress bars left out), stdout."""
    try:
        code = main(argv)
    except SystemExit as exc:  # pragma: no cover - main returns its code
        code = exc.code
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err, (argv, cap.err)
    return code, [ln for ln in cap.err.splitlines() if ln.strip() and "%|" not in ln], cap.out


def _leaf_options():
    for path, p, _ in leaves():
        if any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            continue
        for a in options(p):
            if a.option_strings:
                yield path, a


BIG400, BIG5000 = "1" + "0" * 400, "7" * 5000  # a 400-digit and a 5,000-digit integer
BAD_NUMBERS = ("x", "-1", "nan", "inf", "1e400", BIG400, BIG5000)


def _numeric_cases():
    for path, a in _leaf_options():
        if getattr(a.type, "__name__", "") in NUMERIC and a.nargs is None:
            for bad in BAD_NUMBERS:
                yield pytest.param([*path, a.option_strings[-1], bad],
                                   id=f"{' '.join(path)} {a.option_strings[-1]} {bad[:8]}")


def _parse(parser: argparse.ArgumentParser, capsys, argv: list[str]) -> tuple[int, list[str]]:
    """argparse's verdict on argv with one prebuilt parser (main() parses the same way)."""
    try:
        parser.parse_args(argv)
        code = 0
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert "Traceback" not in err, (argv, err)
    return code, [ln for ln in err.splitlines() if ln.strip()]


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
    """Every integer and number option, with each of BAD_NUMBERS (also 10^400 and a 5,000-digit
    integer: refused by name, never an OverflowError or the int-string limit's ValueError)."""
    cases = list(_numeric_cases())
    assert len(cases) > 600
    parser = build_parser()
    for case in cases:
        argv = case.values[0]
        code, err = _parse(parser, capsys, argv)
        assert code == 2 and len(err) == 1 and len(err[0]) < 400, (argv[:3], code, err)


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


KNOWN_CASES = {
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


@pytest.mark.parametrize("name", list(KNOWN_CASES))
def test_known_cases_exit_2_with_one_line(name, files, capsys, data_dir):
    argv, needle = KNOWN_CASES[name]
    code, err = _run(capsys, [a.format(t=files) for a in argv])
    assert code == 2 and len(err) == 1 and needle in err[0], (name, code, err)


def test_non_zero_exits_say_why(tmp_path, capsys):
    inst = str(tmp_path / "i.json")
    main(["generate", "cltap", "-o", inst])
    capsys.readouterr()
    # the compact MILP (head-cover, the default exact method, proves this instance by its bounds)
    code, err = _run(capsys, ["solve", inst, "--method", "milp-compact", "--time-limit", "1e-9"])
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




def test_stdin_is_read_as_utf8_like_a_file(monkeypatch, capsys):
    """'-' reads the bytes of standard input as UTF-8 with a BOM dropped, whatever the locale's
    encoding: a BOM is accepted (as in a file), an undecodable byte is one line (exit 2), never
    a UnicodeDecodeError (stdin opened strict, e.g. PYTHONIOENCODING=utf-8:strict)."""
    import io

    from crowdopt.campaign.io import read_csv
    from crowdopt.instances import load_instance

    doc = json.dumps({"problem": "worker-select", "max_workers": 2, "scores": [0.5, 0.2]})

    def stdin(raw: bytes) -> None:
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8"))

    stdin(b"\xef\xbb\xbf" + doc.encode())
    assert load_instance("-")[1].max_workers == 2
    stdin(doc[:-1].encode() + b', "name": "caf\xe9"}')
    code, err = _run(capsys, ["solve", "-", "--json"])
    assert code == 2 and len(err) == 1 and "UTF-8" in err[0], err
    stdin(b"\xef\xbb\xbfitem,worker,label\r\ni1,w1,1\r\n")
    assert read_csv("-", "answers")[0] == ["item", "worker", "label"]
    stdin(b"item,worker,label\ni1,w\xe9,1\n")
    with pytest.raises(InputError, match="answers"):
        read_csv("-", "answers")

def test_a_sweep_file_that_is_not_utf8_is_one_line(tmp_path, capsys):
    """TOML is UTF-8: a Latin-1 byte in a sweep file was a UnicodeDecodeError traceback."""
    (tmp_path / "s.toml").write_bytes(b'function = "crowdopt.experiments.executor:busy_task"\n'
                                      b"# caf\xe9\nseeds = [0]\n[grid]\nwork = [1]\n")
    code, err = _run(capsys, ["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "o"),
                              "--quiet"])
    assert code == 2 and len(err) == 1 and "CONFIG" in err[0] and "UTF-8" in err[0], err


# ----------------------------------------------------------------------------- numbers in strings
STRING_NUMBERS = [  # (argv with {x} where a number goes, the field the message names)
    (["simulate", "lsol", "--p", "0.9,{x}"], "--p"),
    (["simulate", "optkg", "--theta-dist", "{x},2"], "--theta-dist"),
    (["simulate", "optkg", "--prior", "1,{x}"], "--prior"),
    (["simulate", "optkg", "--model", "heterogeneous", "--worker-prior", "{x},1"],
     "--worker-prior"),
    (["simulate", "optkg", "--budgets", "{x}K"], "--budgets"),
    (["replay", "optkg", "bluebirds", "--prior", "{x},1"], "--prior"),
    (["reproduce", "lsol", "--quality", "{x},0.9", "-o", "{t}/r"], "--quality"),
    (["olas", "tune-beta", "--golden", "{t}/golden.csv", "--features", "{t}/feat.csv",
      "--grid", "0.1,{x}"], "--grid"),
    (["olas", "tune-beta", "--golden", "{t}/golden.csv", "--features", "{t}/feat.csv",
      "--grid", "0:{x}:0.1"], "--grid"),
    (["campaign", "init", "{t}/c{n}.db", "--policy", "optkg", "--items", "dataset:bluebirds",
      "--budget", "5", "--prior", "{x},1"], "--prior"),
    (["generate", "olas-assign", "--param", "noise=logistic:0,-1,{x}"], "noise"),
    (["generate", "cltap", "--param", "p_max={x}"], "p_max"),
]
NON_FINITE = ("nan", "inf", "-inf", "1e400")


@pytest.fixture
def inputs(tmp_path):
    golden = ("sample,labeler,labeler_accuracy,given_label,true_label,entropy\n"
              + "".join(f"s{i},L{i % 3},0.7,{i % 2},{(i * 3) % 2},0.3\n" for i in range(30)))
    (tmp_path / "golden.csv").write_text(golden)
    (tmp_path / "feat.csv").write_text("sample,f1,f2\n" + "".join(
        f"s{i},{i % 5},{(i * 7) % 3}\n" for i in range(30)))
    (tmp_path / "lab.csv").write_text("task,worker,label\n" + "".join(
        f"t{i},w{j},{(i + j) % 2}\n" for i in range(6) for j in range(3)))
    (tmp_path / "gold.csv").write_text("task,label\n" + "".join(f"t{i},{i % 2}\n"
                                                              for i in range(6)))
    return tmp_path


@pytest.mark.slow
def test_every_string_encoded_number_is_held_to_the_number_rule(inputs, capsys, data_dir):
    """nan, inf and 1e400 written inside a string are refused like the numbers they spell."""
    n = 0
    for argv, field in STRING_NUMBERS:
        for x in NON_FINITE:
            n += 1
            case = [a.format(x=x, t=inputs, n=n) for a in argv]
            code, err = _run(capsys, case)
            assert code == 2 and len(err) == 1 and field in err[0], (case, code, err)


def _docs():
    """One small document per problem (and the logistic-noise form of olas-assign)."""
    from crowdopt.instances import instance_document

    small = {"olas-assign": {"points": 3, "labelers": 2}, "olas-select": {"points": 3,
             "labelers": 2}, "labeler-set": {"labelers": 3, "costs": "uniform"},
             "worker-select": {"workers": 3, "cost_max": 2}, "cltap": {"t": 2, "a": 2}}
    for name, params in small.items():
        inst = crowdopt.generate(name, 0, **params)
        yield name, json.loads(json.dumps(instance_document(inst.spec, inst)))


def _numeric_leaves(doc, path=()):
    """Paths of the numeric fields of a document (first two items of each list)."""
    items = doc.items() if isinstance(doc, dict) else enumerate(doc[:2])
    for k, v in items:
        if k in ("meta", "schema_version"):
            continue
        if isinstance(v, dict | list):
            yield from _numeric_leaves(v, (*path, k))
        elif isinstance(v, int | float) and not isinstance(v, bool):
            yield (*path, k)


RAW_NUMBERS = ("NaN", "Infinity", "-Infinity", "1e400", BIG400, "-" + BIG400, BIG5000)


def test_every_numeric_instance_field_refuses_non_finite_and_huge_numbers(tmp_path, capsys):
    """Every number of every problem's instance document, replaced by a NaN/Infinity literal,
    1e400, +-10^400 or a 5,000-digit integer: an InputError naming the field (never an
    OverflowError, the int-string limit's ValueError or a NaN objective)."""
    from crowdopt.instances import load_instance

    f = tmp_path / "i.json"
    n = 0
    for _, doc in _docs():
        for path in _numeric_leaves(doc):
            for raw in RAW_NUMBERS:
                bad = json.loads(json.dumps(doc))
                cur = bad
                for k in path[:-1]:
                    cur = cur[k]
                cur[path[-1]] = "@@"
                f.write_text(json.dumps(bad).replace('"@@"', raw))
                with pytest.raises(InputError) as e:
                    load_instance(str(f))
                assert "\n" not in str(e.value) and len(str(e.value)) < 400
                n += 1
    assert n > 200
    for raw in (BIG5000, "NaN"):  # and through the command line: exit 2, one line
        f.write_text(json.dumps({"problem": "cltap", "t": "@@"}).replace('"@@"', raw))
        code, err = _run(capsys, ["solve", str(f), "--json"])
        assert code == 2 and len(err) == 1 and "t:" in err[0], (raw[:8], err)


@pytest.mark.slow
def test_string_encoded_noise_weights_are_finite(tmp_path, capsys):
    """'logistic:w0,we,wa' with nan/inf/1e400 in any position: refused, never a NaN objective
    with a certificate."""
    from crowdopt.instances import instance_document

    inst = crowdopt.generate("olas-assign", 0, points=3, labelers=2)
    doc = instance_document(inst.spec, inst)
    f = tmp_path / "n.json"
    for pos in range(3):
        for x in NON_FINITE:
            w = ["0.5", "-1", "1"]
            w[pos] = x
            f.write_text(json.dumps({**doc, "noise": "logistic:" + ",".join(w)}))
            for cmd in (["solve", str(f), "--json"], ["certify", str(f), "--json"]):
                code, err = _run(capsys, cmd)
                assert code == 2 and len(err) == 1 and "noise" in err[0], (cmd, w, err)


# ----------------------------------------------------------------------------- paths
PATH_METAVARS = {"FILE", "DIR", "DB", "GOLD", "ITEMS", "WORKERS", "PAIRS", "PEM", "LABELS",
                 "INSTANCE", "INSTANCE|DIR", "CONFIG.toml", "ANSWERS"}


def _minimal(path: tuple[str, ...], t) -> list[str]:
    """Other arguments a command needs, so the path under test is what fails."""
    return {
        ("campaign", "init"): ["--policy", "optkg", "--items", "dataset:bluebirds",
                               "--budget", "5"],
        ("select",): ["--max-workers", "2"],
        ("estimate",): ["--gold", f"{t}/gold.csv"],
        ("olas", "tune-beta"): ["--golden", f"{t}/golden.csv", "--features", f"{t}/feat.csv"],
        ("olas", "estimate-noise"): ["--golden", f"{t}/golden.csv"],
        # an address that cannot be bound: a path check that let serve start fails, not hangs
        ("campaign", "serve"): ["--host", "256.0.0.1"],
    }.get(path, [])


@pytest.mark.slow
def test_every_path_option_with_a_missing_folder(inputs, capsys, data_dir):
    """Every option or argument naming a file, pointed into a folder that does not exist:
    exit 2 with one line (a DIR output is the exception: it is created, parents too)."""
    n = 0
    for path, p, _ in leaves():
        if any(isinstance(a, argparse._SubParsersAction) for a in p._actions):
            continue
        acts = [a for a in options(p) if a.metavar in PATH_METAVARS]
        positionals = {a.dest: a for a in acts if not a.option_strings}
        for a in acts:
            if a.metavar == "DIR" and a.option_strings:
                continue
            n += 1
            missing = str(inputs / f"no_folder_{n}" / "x.csv")
            argv = [*path]
            for pa in positionals.values():  # positionals first, valid unless under test
                argv.append(missing if pa is a else _valid_positional(pa, inputs))
            if a.option_strings:
                argv += [a.option_strings[-1], missing]
            extra = _minimal(path, inputs)
            if a.option_strings and a.option_strings[-1] in extra:  # the option under test
                k = extra.index(a.option_strings[-1])
                extra = extra[:k] + extra[k + 2:]
            argv += extra
            code, err = _run(capsys, argv)
            assert code == 2 and len(err) == 1, (argv, code, err)
            assert not (inputs / f"no_folder_{n}").exists(), argv
    assert n > 30


def _valid_positional(a, t) -> str:
    if a.metavar == "DB":
        camp = t / "camp.db"
        if not camp.exists():
            assert main(["campaign", "init", str(camp), "--policy", "optkg", "--items",
                         "dataset:bluebirds", "--budget", "5"]) == 0
        return str(camp)
    return {"LABELS": f"{t}/lab.csv", "INSTANCE": f"{t}/none.json",
            "INSTANCE|DIR": f"{t}/none.json", "CONFIG.toml": f"{t}/none.toml",
            "ANSWERS": f"{t}/none.csv"}.get(a.metavar, "x")


# ----------------------------------------------------------------------------- label files
@pytest.mark.slow
def test_sep_is_one_character_or_a_name(inputs, capsys):
    lab, gold = str(inputs / "lab.csv"), str(inputs / "gold.csv")
    for cmd in (["aggregate", lab], ["estimate", lab, "--gold", gold]):
        for bad in ("", "ab", "\n", '"', "comma,"):
            code, err = _run(capsys, [*cmd, "--sep", bad])
            assert code == 2 and len(err) == 1 and "--sep" in err[0], (cmd, bad, err)
        for ok in (",", "comma"):
            code, _ = _run(capsys, [*cmd, "--sep", ok, "--json"])
            assert code == 0, (cmd, ok)
    with pytest.raises(InputError, match="sep"):
        crowd.read_labels(lab, sep="ab")


@pytest.mark.slow
@pytest.mark.parametrize("column", [0, 1, 2])
def test_missing_values_in_label_files_are_refused(tmp_path, capsys, column):
    """Empty, NA, N/A, NaN, None, null in a task, worker or label cell: refused everywhere
    (aggregate, estimate, the reader), naming the row and counting the rows; never a class."""
    rows = [f"t{i},w{j},{(i + j) % 2}" for i in range(4) for j in range(3)]
    gold = tmp_path / "gold.csv"
    gold.write_text("task,label\nt0,0\nt1,1\n")
    for marker in ("", "NA", "N/A", "nan", "NaN", "None", "null"):
        cells = rows[4].split(",")
        cells[column] = marker
        f = tmp_path / "m.csv"
        f.write_text("task,worker,label\n" + "\n".join([*rows, ",".join(cells), ",".join(cells)
                                                         .replace("w", "v")]) + "\n")
        for cmd in (["aggregate", str(f)], ["estimate", str(f), "--gold", str(gold)]):
            code, err = _run(capsys, cmd)
            assert code == 2 and len(err) == 1 and "missing" in err[0] and "2 row(s)" in err[0], \
                (marker, cmd, err)
    for bad in (None, float("nan")):
        with pytest.raises(InputError):
            crowd.from_arrays(["t1", "t2"], ["w1", "w1"], [1, bad])


def test_infinite_labels_and_ids_are_refused_in_python_as_in_files():
    """A label file refuses 'inf' among numeric labels; from_arrays and DataFrames took float
    infinity as a class (or a numeric id), whose aggregation then wrote Infinity into its
    JSON."""
    pd = pytest.importorskip("pandas")
    for bad in (float("inf"), -np.inf, np.float32("inf")):
        for k in range(3):
            cols = [["t1", "t1", "t2"], ["w1", "w2", "w1"], [1.5, 0.5, 1.5]]
            cols[k] = [*cols[k][:2], bad]
            with pytest.raises(InputError, match=r"\[2\]: expected a finite number"):
                crowd.from_arrays(*cols)
    for col, values in (("label", [1.5, 0.5, np.inf]), ("label", ["a", "b", np.inf]),
                        ("task", [1.0, 1.0, -np.inf]), ("worker", [2.0, 1.0, np.inf])):
        cols = {"task": ["t1", "t1", "t2"], "worker": ["w1", "w2", "w1"], "label": [0, 1, 1]}
        df = pd.DataFrame({**cols, col: values})
        with pytest.raises(InputError, match=r"\[2\]: expected a finite number"):
            crowd.from_dataframe(df)


def test_numeric_labels_are_one_class_per_value(tmp_path, capsys):
    f = tmp_path / "n.csv"
    f.write_text("task,worker,label\nt1,w1,1\nt1,w2,1.0\nt2,w1,0\nt2,w2,0.0\nt3,w1,01\n")
    code, _, out = _run_out(capsys, ["aggregate", str(f), "--method", "mv", "--json"])
    doc = json.loads(out) if code == 0 else None
    assert code == 0 and doc["n_classes"] == 2 and doc["classes"] == [0, 1], doc
    g = tmp_path / "g.csv"
    g.write_text("task,label\nt1,1.0\nt2,0\n")  # gold in another spelling: the same classes
    assert _run(capsys, ["estimate", str(f), "--gold", str(g)])[0] == 0


def test_csv_fields_over_128_kb_are_read(tmp_path, capsys):
    """csv's 128 KB field limit is lifted for every reader: a long cell is data."""
    long_id = "x" * 200_000
    f = tmp_path / "big.csv"
    f.write_text(f"task,worker,label\n{long_id},w1,a\n{long_id},w2,a\nt2,w1,b\n")
    code, err = _run(capsys, ["aggregate", str(f), "--method", "mv"])
    assert code == 0, err
    g = tmp_path / "golden.csv"
    g.write_text("sample,labeler,labeler_accuracy,given_label,true_label,entropy\n"
                 f"s1,A,0.8,1,1,{'9' * 200_000}\n")
    code, err = _run(capsys, ["olas", "estimate-noise", "--golden", str(g)])
    assert code == 2 and len(err) == 1 and "entropy" in err[0], err


# ----------------------------------------------------------------------------- sizes and ranges
SWEEP_HEAD = 'function = "crowdopt.experiments.executor:busy_task"\n'
BAD_SWEEPS = {
    "negative seed start": ("seeds = {start = -5, count = 2}\n[grid]\nwork = [1]\n", "seeds"),
    "negative seed": ("seeds = [3, -1]\n[grid]\nwork = [1]\n", "seeds[1]"),
    "huge seed": ("seeds = [99999999999999999999]\n[grid]\nwork = [1]\n", "seeds[0]"),
    "enormous seed count": ("seeds = 10000000000000\n[grid]\nwork = [1]\n", "tasks"),
    "enormous seed range": ("seeds = {start = 0, count = 100000000000}\n[grid]\nwork = [1]\n",
                            "tasks"),
    "enormous grid": ("seeds = 1\n[grid]\n" + "".join(
        f"k{i} = [{', '.join(map(str, range(60)))}]\n" for i in range(8)), "tasks"),
    "nan time limit": ('seeds = 1\n[grid]\nwork = [1]\n', None),
}


@pytest.mark.parametrize("name", list(BAD_SWEEPS))
def test_sweep_sizes_and_seeds_are_refused_before_work(name, tmp_path, capsys):
    body, field = BAD_SWEEPS[name]
    head = SWEEP_HEAD
    if field is None:  # a problem sweep with time_limit = nan
        head, field = 'problem = "cltap"\ntime_limit = nan\n', "time_limit"
        body = "seeds = 1\n[grid]\nt = [3]\n"
    (tmp_path / "s.toml").write_text(head + body)
    code, err = _run(capsys, ["sweep", str(tmp_path / "s.toml"), "-o", str(tmp_path / "o"),
                              "--quiet"])
    assert code == 2 and len(err) == 1 and field in err[0], (name, err)
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_campaign_arguments(tmp_path, capsys, data_dir):
    init = ["campaign", "init", str(tmp_path / "c.db"), "--policy", "optkg", "--items",
            "dataset:bluebirds", "--budget", "5"]
    for argv, field in (([*init, "--seed", "9" * 20], "--seed"),
                        ([*init, "--budget", "9" * 20], "--budget"),
                        (["campaign", "serve", str(tmp_path / "c.db"), "--port", "70000"], "--port"),
                        (["campaign", "next", str(tmp_path / "c.db"), "--lease", "1e300"],
                         "--lease"),
                        ([init[0], init[1], str(tmp_path / "none" / "c.db"), *init[3:]], "DB")):
        code, err = _run(capsys, argv)
        assert code == 2 and len(err) == 1 and field in err[0], (argv, err)


# ----------------------------------------------------------------------------- the Python API
def test_api_arguments_raise_input_error():
    """Every bad argument of the Python API is an InputError (never AttributeError, KeyError,
    TypeError or a ValueError from inside)."""
    inst = crowdopt.generate("worker-select", 0, workers=4)
    other = crowdopt.generate("worker-select", 1, workers=6)
    loaded = crowdopt.load(inst.to_dict() | {"problem": "worker-select"})
    table = crowd.from_arrays(["t1", "t1", "t2"], ["w1", "w2", "w1"], [0, 1, 1])
    calls = {
        "certify(inst, 'garbage')": lambda: crowdopt.certify(inst, "garbage"),
        "certify(inst, [1, 2])": lambda: crowdopt.certify(inst, [1, 2]),
        "certify(inst, 5)": lambda: crowdopt.certify(inst, 5),
        "generate(seed=-1)": lambda: crowdopt.generate("cltap", seed=-1),
        "generate(seed=10**400)": lambda: crowdopt.generate("cltap", seed=10**400),
        "generate(seed='x')": lambda: crowdopt.generate("cltap", seed="x"),
        "generate(t=10**400)": lambda: crowdopt.generate("cltap", t=10**400),
        "solve(time_limit=nan)": lambda: crowdopt.solve(inst, time_limit=float("nan")),
        "solve(threads='x')": lambda: crowdopt.solve(inst, threads="x"),
        "solve(seed=-1)": lambda: crowdopt.solve(inst, seed=-1),
        "solve(method=['fast'])": lambda: crowdopt.solve(inst, ["fast"]),
        "compare(mip_rel_gap=nan)": lambda: crowdopt.compare(inst, mip_rel_gap=float("nan")),
        "compare(algorithms='fast')": lambda: crowdopt.compare(inst, algorithms="fast"),
        "certify(presolve='x')": lambda: crowdopt.certify(inst, presolve="x"),
        "solve_model(loaded, model of another)": lambda: crowdopt.solve_model(
            loaded, crowdopt.build_model(other)),
        "solve_model(inst, 'x')": lambda: crowdopt.solve_model(inst, "x"),
        "crowd.dawid_skene(None)": lambda: crowd.dawid_skene(None),
        "crowd.run_method(list)": lambda: crowd.run_method([1], "mv"),
        "crowd.run_method(method=list)": lambda: crowd.run_method(table, ["mv"]),
        "crowd.kos(tol='x')": lambda: crowd.kos(table, tol="x"),
        "crowd.kos(max_iter=10**19)": lambda: crowd.kos(table, max_iter=10**19),
        "crowd.one_coin_em(gold=5)": lambda: crowd.one_coin_em(table, gold=5),
        "crowd.weighted_majority_vote(10**400)": lambda: crowd.weighted_majority_vote(
            table, 10**400),
        "DawidSkene(n_iter=nan)": lambda: crowd.DawidSkene(n_iter=float("nan"))
        .fit_predict(table.to_dataframe()),
        "WeightedMajorityVote(weights=[1, 2, 3])": lambda: crowd.WeightedMajorityVote(
            weights=[1, 2, 3]).fit_predict(table.to_dataframe()),
    }
    for name, call in calls.items():
        try:
            call()
        except InputError:
            continue
        except Exception as exc:  # noqa: BLE001 - the report names the call
            pytest.fail(f"{name}: {type(exc).__name__}: {exc}")
        pytest.fail(f"{name}: accepted")
    # the loaded instance with its own model: solved and certified (no KeyError)
    assert crowdopt.solve_model(loaded, crowdopt.build_model(loaded)).certified


def test_array_likes_are_accepted_where_lists_are():
    pd = pytest.importorskip("pandas")
    from crowdopt.problems.cltap import CltapInstance
    from crowdopt.problems.labeler_set import LabelerSetInstance
    from crowdopt.problems.olas_assign import OlasAssignInstance
    from crowdopt.problems.olas_select import OlasSelectInstance
    from crowdopt.problems.worker_select import WorkerSelectInstance

    acc, cap, ent = [0.7, 0.8, 0.6], [2, 2, 2], [0.1, 0.2, 0.3, 0.4]
    p = [[0.6, 0.7], [0.8, 0.6]]
    makers = {
        "olas-assign": lambda c: OlasAssignInstance.from_arrays(c(acc), c(cap), c(ent)),
        "olas-select": lambda c: OlasSelectInstance.from_arrays(c(acc), c(cap), c(ent)),
        "labeler-set": lambda c: LabelerSetInstance.from_arrays(c([0.6, 0.7, 0.8])),
        "worker-select": lambda c: WorkerSelectInstance.from_arrays(2, scores=c([0.1, 0.5, 0.3])),
        "cltap": lambda c: CltapInstance.from_arrays(
            pd.DataFrame(p) if c is pd.Series else c(p), 2, 4),
    }
    for name, make in makers.items():
        want = crowdopt.solve(make(list)).objective
        for conv in (np.asarray, pd.Series, tuple):
            assert crowdopt.solve(make(conv)).objective == want, (name, conv)
    ref = crowd.from_arrays(["t1", "t1", "t2"], ["w1", "w2", "w1"], [1, 0, 1])
    for conv in (np.asarray, pd.Series):
        tb = crowd.from_arrays(conv(["t1", "t1", "t2"]), conv(["w1", "w2", "w1"]),
                                        conv([1, 0, 1]))
        assert tb.rows() == ref.rows() and type(tb.classes[0]) is int
    w = pd.Series({"w1": 1.0, "w2": 0.5})
    out = crowd.WeightedMajorityVote(weights=w).fit_predict(ref.to_dataframe())
    assert len(out) == 2
    with pytest.raises(InputError):
        OlasAssignInstance.from_arrays(np.asarray([0.7, np.nan, 0.6]), cap, ent)


def test_a_webhook_secret_file_is_its_bytes(tmp_path):
    """The HMAC key file is read as bytes: a key that is not UTF-8 text was a
    UnicodeDecodeError traceback (the file was decoded with the locale's encoding)."""
    from crowdopt.campaign.webhooks import load_secret

    (tmp_path / "k").write_bytes(b"\xe9\xff-key\n")
    assert load_secret(tmp_path / "k") == b"\xe9\xff-key"
    (tmp_path / "t").write_text("plain-hex-key\n")
    assert load_secret(tmp_path / "t") == b"plain-hex-key"


def test_simulate_olas_data_is_read_as_utf8_like_every_table(tmp_path):
    """--data CSV: a BOM glued to the first column's name hid the --target column, and a
    Latin-1 byte was a UnicodeDecodeError traceback."""
    from crowdopt.sim.uci import load_csv_dataset

    rows = "target,f1,f2\n" + "".join(f"{i % 2},{i / 7:.3f},{i % 5}\n" for i in range(20))
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbf" + rows.encode())
    assert load_csv_dataset(tmp_path / "bom.csv", "target").X.shape == (20, 2)
    (tmp_path / "l1.csv").write_bytes(rows.replace("f2", "f\xe9").encode("latin-1"))
    with pytest.raises(InputError, match="--data: expected UTF-8 text"):
        load_csv_dataset(tmp_path / "l1.csv", "target")
