"""Every input means one thing, everywhere: one reader per kind of value (docs/inputs.md).

Property tests draw from the classes of odd input for every reader and check each route that
reads that kind of value against an oracle written here from the rule alone (`make test` runs
SAMPLE examples of each, `make soak` SOAK >= 250):

- text (ids, labels, names): refused when it holds a character of Unicode categories Cc, Cf,
  Zl, Zp or Cs (a lone surrogate) or a variation selector, or when it is not in NFC;
- integer texts (command-line words, HTTP query parameters): sign and ASCII digits, <= 2^53;
- number texts (command line, table cells, JSON): sign, ASCII digits, point, exponent, neither
  overflowing nor underflowing;
- flags: a Python argument True or False, an environment variable true/false, 1/0, yes/no;
- label and id columns: every row checked, not the first of a group of equal values.

Then one named test per case that used to change meaning, crash or be refused: a repeated
option or query parameter, an unknown query parameter, a file that cannot be read (another
user's, a folder, a device), wrong-typed Python arguments, a replay budget its testers exceed,
`datasets fetch` names, numpy values in a solution.
"""

from __future__ import annotations

import argparse
import asyncio
import decimal
import fractions
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from cli_tree import leaves
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt import cliargs, datapath, validate
from crowdopt.cli import build_parser, main
from crowdopt.crowd import tables as T
from crowdopt.errors import InputError

SAMPLE, SOAK = 25, 300
PROPERTY = settings(max_examples=SAMPLE, deadline=None, suppress_health_check=list(HealthCheck))
SOAKED = settings(max_examples=SOAK, deadline=None, suppress_health_check=list(HealthCheck))


def _refused(fn, *a, **kw) -> InputError | None:
    """The InputError `fn` raises (one line), or None when it accepts."""
    try:
        fn(*a, **kw)
    except InputError as exc:
        assert "\n" not in str(exc), str(exc)
        return exc
    return None


def _run(capsys, argv: list[str]) -> tuple[int, list[str], str]:
    """main(argv): exit code, stderr lines (progress bars left out), stdout."""
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own exit (a bad option)
        code = exc.code
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err, (argv, cap.err)
    return code, [ln for ln in cap.err.splitlines() if ln.strip() and "%|" not in ln], cap.out


def _refused_cli(capsys, argv: list[str], needle: str) -> str:
    code, err, out = _run(capsys, argv)
    assert code == 2 and out == "" and len(err) == 1 and needle in err[0], (argv, code, err)
    return err[0]


# ----------------------------------------------------------------------------- text
REFUSED_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Cs"}
SELECTORS = {*range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0), 0x180B, 0x180C, 0x180D, 0x180F}
# the look-alikes and invisibles of the rule, and texts that are not NFC (a decomposed 'é', the
# Angstrom sign, Hangul jamo), beside ordinary letters, digits and spaces
SPECIAL = ["\u200b", "\ufeff", "\u00ad", "\u200d", "\u2028", "\u2029", "\ufe0f", "\U000e0100",
           "\u180b", "\ud800", "\udfff", "\x00", "\t", "\x85", "\u202e", "\u2066", "e\u0301",
           "\u0301", "\u212b", "\u1100\u1161", "\u00e9", "\uac00", "\u00a0", " ", "a", "1",
           "\u4e2d", "\U0001f600"]
TEXTS = st.lists(st.one_of(st.sampled_from(SPECIAL), st.characters()), min_size=1,
                 max_size=6).map("".join)


def keeps_text_rule(s: str) -> bool:
    """The oracle: no character of the refused categories, no variation selector, NFC."""
    return (all(unicodedata.category(c) not in REFUSED_CATEGORIES and ord(c) not in SELECTORS
                for c in s) and unicodedata.normalize("NFC", s) == s)


def _text_rule(data) -> None:
    from crowdopt.campaign.http import _worker_param
    from crowdopt.campaign.io import text_id

    s = data.draw(TEXTS)
    ok, trimmed = keeps_text_rule(s), s.strip()
    assert (_refused(validate.clean_text, s, "x") is None) == ok, ascii(s)
    # an id as given: instance ids, label-table ids
    as_id = ok and bool(trimmed) and s != "other"
    assert (_refused(crowdopt.LabelerSetInstance.from_arrays, [0.8, 0.7],
                     labeler_ids=["other", s]) is None) == as_id, ascii(s)
    assert (_refused(T.from_arrays, [s, "other"], ["w", "v"], [0, 1]) is None) == as_id
    # trimmed first: labels, campaign ids (item, worker, label, name), the HTTP worker
    trimmed_ok = bool(trimmed) and keeps_text_rule(trimmed)
    assert (_refused(T.from_arrays, ["a", "b"], ["w", "w"], ["other", s]) is None) == trimmed_ok
    assert (_refused(text_id, s, "worker") is None) == trimmed_ok, ascii(s)
    assert (_refused(_worker_param, s) is None) == trimmed_ok, ascii(s)


@PROPERTY
@given(data=st.data())
def test_text_rule_by_every_route(data):
    _text_rule(data)


@pytest.mark.soak
@SOAKED
@given(data=st.data())
def test_soak_text_rule_by_every_route(data):
    _text_rule(data)


# ----------------------------------------------------------------------------- integer texts
ODD_INTEGERS = ["1_0", "3.0", "1e3", "\uff11\uff12", "0x10", "", " ", "+-1", "1 2", "\u0663",
                "nan", "inf", "1,000", "\u22125", "5.", "--5", str(2**53 + 1), str(-(2**53) - 1),
                str(2**64), "9" * 41, "0" * 50 + "7"]


@st.composite
def integer_texts(draw):
    n = draw(st.one_of(st.integers(-(2**53), 2**53), st.integers(0, 99)))
    spelled = draw(st.sampled_from([str(n), f"+{n}" if n >= 0 else str(n),
                                    f"0{n}" if n >= 0 else str(n), f" {n} ", f"\t{n}\n"]))
    return draw(st.one_of(st.just(spelled), st.sampled_from(ODD_INTEGERS),
                          st.text(alphabet="0123456789+-_. e", max_size=6)))


def integer_oracle(s: str) -> int | None:
    t = s.strip()
    body = t[1:] if t[:1] in ("+", "-") else t
    if not body or any(c not in "0123456789" for c in body) or len(t) > 40:
        return None
    return int(t) if abs(int(t)) <= 2**53 else None


class _Query:
    def __init__(self, **params):
        self.query_params = params


def _integer_rule(data) -> None:
    from crowdopt.campaign.http import _int_param

    s = data.draw(integer_texts())
    want = integer_oracle(s)
    if want is None:
        assert _refused(validate.integer_text, s, "n") is not None, s
    else:
        assert validate.integer_text(s, "n") == want, s
    nonneg = want is not None and want >= 0
    try:
        got = cliargs.nonneg_int(s)
    except argparse.ArgumentTypeError:
        got = None
    assert got == (want if nonneg else None), s
    err = _refused(_int_param, _Query(offset=s), "offset", 0)
    assert (err is None) == nonneg, s
    if nonneg:
        assert _int_param(_Query(offset=s), "offset", 0) == want


@PROPERTY
@given(data=st.data())
def test_integer_texts_by_every_route(data):
    _integer_rule(data)


@pytest.mark.soak
@SOAKED
@given(data=st.data())
def test_soak_integer_texts_by_every_route(data):
    _integer_rule(data)


# ----------------------------------------------------------------------------- number texts
ODD_NUMBERS = ["1_0", "nan", "inf", "-inf", "Infinity", "1e400", "-1e400", "1e-400", "-1e-400",
               "4e-320", "2.2250738585072014e-308", "2.2e-308", "1.7976931348623157e308",
               "1.8e308", "0e999", "0e-9999", "0.0", "-0", ".5", "5.", "1.2.3", "e5", "1e", ".",
               "\uff11", "1,5", "", " ", "--1", "+.5e-3", "00012", "1E+05", "9007199254740993",
               "1e20", "0." + "0" * 330 + "1", "1" + "0" * 320]


@st.composite
def number_texts(draw):
    x = draw(st.floats(allow_nan=False, allow_infinity=False))
    spelled = draw(st.sampled_from([repr(x), f"{x:e}", f" {x!r} ", f"+{x!r}" if x >= 0
                                    else repr(x), f"{x:.3f}" if abs(x) < 1e20 else repr(x)]))
    return draw(st.one_of(st.just(spelled), st.sampled_from(ODD_NUMBERS),
                          st.text(alphabet="0123456789+-.eE_ ", max_size=8)))


def number_oracle(s: str) -> float | None:
    """The number `s` spells by the rule, from Decimal's syntax on the allowed characters and
    the float range (underflow: a non-zero value that reads as 0 or as a subnormal)."""
    t = s.strip()
    if not t or any(c not in "0123456789+-.eE" for c in t):
        return None
    try:
        d = decimal.Decimal(t)
    except decimal.InvalidOperation:
        return None
    v = float(t)
    if v in (float("inf"), float("-inf")) or (d != 0 and abs(v) < sys.float_info.min):
        return None
    return v


def _number_rule(data) -> None:
    s = data.draw(number_texts())
    want = number_oracle(s)
    if want is None:
        assert _refused(validate.real_text, s, "x") is not None, s
    else:
        assert validate.real_text(s, "x") == want, s
    try:
        got = cliargs.nonneg_float(s)
    except argparse.ArgumentTypeError:
        got = None
    assert got == (want if want is not None and want >= 0 else None), s
    # a label cell: a number of the rule (integral values within 2^53), else text
    t = s.strip()
    label = T._label_number(s)
    if want is None or want.is_integer() and abs(int(t) if t.lstrip("+-").isdigit()
                                                 else want) > 2**53:
        assert label is None, s
    else:
        assert label == want, s
    # JSON: a number literal of JSON's grammar reads as itself, or is refused by its place when
    # out of range (NaN and Infinity, json's extensions, are left to the field's own check)
    try:
        plain = json.loads(t, parse_constant=lambda c: 1 / 0)
    except (ValueError, ZeroDivisionError):
        return
    if isinstance(plain, int):  # an integer literal stays an exact int: its field checks it
        assert validate.json_loads(f"[{t}]", "doc") == [plain]
    elif want is None:
        err = _refused(validate.json_loads, f"[{t}]", "doc")
        assert err is not None and str(err).startswith("doc[0]:"), t
    else:
        assert validate.json_loads(f"[{t}]", "doc") == [plain] == [want]


@PROPERTY
@given(data=st.data())
def test_number_texts_by_every_route(data):
    _number_rule(data)


@pytest.mark.soak
@SOAKED
@given(data=st.data())
def test_soak_number_texts_by_every_route(data):
    _number_rule(data)


# ----------------------------------------------------------------------------- flags
FLAG_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}
ODD_FLAGS = ["on", "off", "maybe", "2", "-1", "y", "n", "tru", "", " ", "yes no", "t", "0.0",
             "None", "\u0661", "\uff59es"]


@st.composite
def flag_values(draw):
    word = draw(st.sampled_from(sorted(FLAG_WORDS)))
    cased = "".join(c.upper() if draw(st.booleans()) else c for c in word)
    spelled = draw(st.sampled_from([cased, f" {cased} ", f"\t{cased}"]))
    return draw(st.one_of(st.just(spelled), st.sampled_from(ODD_FLAGS), st.booleans(),
                          st.integers(-2, 3), st.text(max_size=4).filter(lambda t: "\0" not in t),
                          st.none()))


def flag_oracle(x, text: bool):
    """A boolean; written as text (an environment variable), one of the six words."""
    if isinstance(x, bool):
        return x
    if text and isinstance(x, str):
        return FLAG_WORDS.get(x.strip().lower())
    return None


def _flag_rule(data, monkeypatch) -> None:
    from crowdopt.progress import progress_enabled

    x = data.draw(flag_values())
    want = flag_oracle(x, text=False)  # a Python argument: True or False
    if want is None:
        assert _refused(validate.flag, x, "f") is not None, repr(x)
        if x is not None:  # None is the offline argument's "not given"
            assert _refused(datapath.offline, x) is not None, repr(x)
    else:
        assert validate.flag(x, "f") is want and datapath.offline(x) is want
    if not isinstance(x, str):
        return
    for name in validate.ENV_FLAGS:  # the environment: empty is unset, else the six words
        monkeypatch.setenv(name, x)
    env = None if not x.strip() else flag_oracle(x, text=True)
    if x.strip() and env is None:
        assert _refused(validate.env_flag, "CROWDOPT_OFFLINE") is not None
        assert _refused(datapath.offline) is not None
        assert _refused(progress_enabled) is not None
    else:
        assert datapath.offline() is bool(env)
        assert progress_enabled() is (True if env is None else env)


@PROPERTY
@given(data=st.data())
def test_flags_by_every_route(data, monkeypatch):
    _flag_rule(data, monkeypatch)


@pytest.mark.soak
@SOAKED
@given(data=st.data())
def test_soak_flags_by_every_route(data, monkeypatch):
    _flag_rule(data, monkeypatch)


# ----------------------------------------------------------------------------- every row
LABEL_INTRUDERS = [(True, False), (False, False), (np.True_, False), (1 + 0j, False),
                   (0j, False), (1.0, True), (0.0, True), (np.float64(1.0), True),
                   (fractions.Fraction(1), True), (decimal.Decimal(0), True), ("1.0", True)]
ID_INTRUDERS = [(True, False), (np.True_, False), (1.0, False), (np.float64(2.0), False),
                (1.5, False), (1 + 0j, False), (7, True), ("1", True), (np.int64(3), True)]


def _every_row_rule(data) -> None:
    pd = pytest.importorskip("pandas")
    values = data.draw(st.lists(st.sampled_from([0, 1]), min_size=2, max_size=6))
    pos = data.draw(st.integers(0, len(values)))
    n = len(values) + 1
    intruder, ok = data.draw(st.sampled_from(LABEL_INTRUDERS))
    labels = [*values[:pos], intruder, *values[pos:]]
    tasks, workers = [f"t{i}" for i in range(n)], ["w"] * n
    frame = pd.DataFrame({"task": tasks, "worker": workers,
                          "label": pd.Series(labels, dtype=object)})
    for route in (lambda: T.from_arrays(tasks, workers, labels), lambda: T.from_dataframe(frame)):
        err = _refused(route)
        assert (err is None) == ok, (labels, err)
        if ok:
            assert route().classes.tolist() == sorted({*values, 1 if intruder else 0})
        else:
            assert str(err).startswith(f"label[{pos}]:"), (labels, str(err))
    intruder, ok = data.draw(st.sampled_from(ID_INTRUDERS))
    ids = [*range(10, 10 + pos), intruder, *range(20, 20 + len(values) - pos)]
    err = _refused(T.from_arrays, ids, workers, [0] * n)
    assert (err is None) == ok, (ids, err)
    if not ok:
        assert str(err).startswith(f"task[{pos}]:"), (ids, str(err))


@PROPERTY
@given(data=st.data())
def test_every_row_is_checked_not_the_first_of_equal_values(data):
    _every_row_rule(data)


@pytest.mark.soak
@SOAKED
@given(data=st.data())
def test_soak_every_row_is_checked(data):
    _every_row_rule(data)


# ----------------------------------------------------------------------------- named cases
def test_look_alike_texts_are_refused(tmp_path, capsys):
    """'1' and '1' + U+200B were two classes printed alike; U+FEFF, a variation selector and
    U+2028 passed in a worker id; the two Unicode spellings of 'café' were two classes."""
    from crowdopt.campaign import Campaign

    for bad, says in (("1\u200b", "U+200B"), ("cafe\u0301", "NFC")):
        err = _refused(T.from_arrays, ["a", "b", "c"], ["w"] * 3, ["1", bad, "0"])
        assert err is not None and says in str(err) and str(err).startswith("label[1]:")
    p = tmp_path / "l.csv"
    p.write_text("task,worker,label\nt1,w1,caf\u00e9\nt2,w1,cafe\u0301\n", encoding="utf-8")
    _refused_cli(capsys, ["aggregate", str(p)], "NFC")
    camp = Campaign.create(tmp_path / "c.db", policy="optkg", items=["a", "b"], budget=4)
    for bad in ("w\ufeff", "w\ufe0f", "w\u2028x", "\u200bw"):
        assert _refused(camp.next, 1, worker=bad) is not None, ascii(bad)


def test_a_label_or_id_equal_to_an_earlier_one_is_still_checked():
    for labels, row in (([1, True, 0, 0], 1), ([1, 1 + 0j, 0, 0], 1)):
        err = _refused(T.from_arrays, ["a", "b", "c", "d"], ["w"] * 4, labels)
        assert err is not None and str(err).startswith(f"label[{row}]:")
    err = _refused(T.from_arrays, [1, 1.0], ["w", "v"], [0, 1])
    assert err is not None and str(err).startswith("task[1]:")


def test_numbers_read_one_way(tmp_path, capsys):
    """'1e-400' was class 0 where '1e400' was refused; '1_0' was text in a label column but 10
    in --time-limit; 1e-400 in a JSON instance read as 0."""
    for bad in ("1e-400", "1e400"):
        err = _refused(T.from_arrays, ["a", "b", "c"], ["w"] * 3, ["1", bad, "0"])
        assert err is not None and bad in str(err)
    assert T.from_arrays(["a", "b"], ["w", "w"], ["1_0", "1"]).classes.tolist() == ["1", "1_0"]
    inst = tmp_path / "i.json"
    inst.write_text('{"problem": "labeler-set", "schema_version": 1, "qualities": [0.9, 0.8]}')
    _refused_cli(capsys, ["solve", str(inst), "--time-limit", "1_0"], "--time-limit")
    _refused_cli(capsys, ["solve", str(inst), "--seed", "\uff11"], "--seed")
    inst.write_text('{"problem": "labeler-set", "schema_version": 1, "qualities": [0.9, 1e-400]}')
    _refused_cli(capsys, ["solve", str(inst)], "qualities[1]: expected a number within the "
                 "float range")
    _refused_cli(capsys, ["generate", "olas-assign", "--param", "acc_min=1e-400"],
                 "--param acc_min: expected a number within the float range")


@pytest.mark.parametrize("argv, name", [
    (["--mirror", "file:///a", "--mirror", "file:///b", "datasets", "list"], "--mirror"),
    (["datasets", "fetch", "gal_toy", "--mirror", "file:///a", "--mirror", "file:///b"],
     "--mirror"),
    (["--mirror", "file:///a", "datasets", "fetch", "gal_toy", "--mirror", "file:///b"],
     "--mirror"),
    (["solve", "i.json", "--seed", "1", "--seed", "2"], "--seed"),
    (["solve", "i.json", "--method", "fast", "--method", "exact"], "--method"),
    (["solve", "i.json", "--time-limit", "5", "--time-limit", "1e308"], "--time-limit"),
    (["solve", "i.json", "-o", "a.json", "--output", "b.json"], "-o/--output"),
    (["--offline", "datasets", "list", "--offline"], "--offline"),
    (["replay", "lsol", "x.csv", "--runs", "2", "--reps", "3"], "--reps"),
])
def test_a_repeated_option_is_refused_naming_it(argv, name, capsys):
    err = _refused_cli(capsys, argv, f"argument {name}: expected once, found twice")
    assert "crowdopt" in err


def test_every_option_of_every_command_given_twice_is_refused(capsys):
    """The rule lives in the parser: each option of each command that is not documented as
    repeatable (`--param`, `--webhook`: "repeatable" in their help), given twice with valid
    values, is refused before the command runs."""
    checked, top = 0, build_parser()
    for path, parser, _ in leaves(top):
        for a in parser._actions:
            if not a.option_strings or isinstance(a, argparse._HelpAction):
                continue
            if isinstance(a, argparse._AppendAction):
                assert "repeatable" in (a.help or ""), (path, a.option_strings)
                continue
            value = [_valid_word(a)] * (a.nargs if isinstance(a.nargs, int) else 1)
            argv = [*path, a.option_strings[0], *value, a.option_strings[-1], *value]
            with pytest.raises(SystemExit) as exit_:
                top.parse_args(argv)
            err = capsys.readouterr().err
            assert exit_.value.code == 2 and "expected once, found twice" in err, (argv, err)
            checked += 1
    assert checked > 300


def _valid_word(action: argparse.Action) -> str:
    """A word the option's type and choices accept."""
    if action.choices:
        return str(next(iter(action.choices)))
    for word in ("1", "0.5", "x.json", "a"):
        try:
            if action.type is None or action.type(word) is not None:
                return word
        except (argparse.ArgumentTypeError, ValueError, TypeError, InputError):
            continue
    raise AssertionError(action.option_strings)


def test_datasets_fetch_names(tmp_path, monkeypatch, capsys, data_dir):
    """`fetch --all nope` fetched everything and exited 0; `fetch gal_toy --mirror URL gal_toy`
    was "unrecognized arguments" where `fetch gal_toy gal_toy` was accepted: names may now come
    between options, and one named twice is refused either way."""
    monkeypatch.setenv("CROWDOPT_DATA", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CROWDOPT_OFFLINE", raising=False)
    mirror = Path(data_dir).as_uri()
    _refused_cli(capsys, ["datasets", "fetch", "--all", "nope"], "no data set name with --all")
    for argv in (["gal_toy", "--mirror", mirror, "gal_toy"], ["gal_toy", "gal_toy", "--mirror",
                                                              mirror]):
        _refused_cli(capsys, ["datasets", "fetch", *argv], "'gal_toy' twice")
    code, err, out = _run(capsys, ["datasets", "fetch", "gal_toy", "--mirror", mirror, "web",
                                   "--json", "--quiet"])
    assert code == 0 and [s["name"] for s in json.loads(out)["sets"]] == ["gal_toy", "web"]
    _refused_cli(capsys, ["datasets", "fetch", "gal_toy", "--mirror", mirror, "--bogus"],
                 "unrecognized arguments: --bogus")


def test_wrong_typed_python_arguments_name_the_argument(tmp_path, monkeypatch, data_dir):
    from crowdopt.crowd.datasets import load_dataset, load_table

    pytest.importorskip("pandas")
    for fn in (load_dataset, load_table):
        for kw, name in (({"data_dir": b"/x"}, "data_dir"), ({"data_dir": 123}, "data_dir"),
                         ({"mirror": 123}, "mirror"), ({"offline": "no"}, "offline"),
                         ({"offline": "maybe"}, "offline"), ({"offline": 2}, "offline")):
            err = _refused(fn, "gal_toy", **kw)
            assert err is not None and str(err).startswith(f"{name}:"), (fn, kw, err)
    # offline="no" read as offline (refused now, above); False is online, True offline;
    # CROWDOPT_OFFLINE=maybe was online
    monkeypatch.setattr(datapath, "_shared_candidates", lambda: [])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("CROWDOPT_DATA", raising=False)
    mirror = Path(data_dir).as_uri()
    with pytest.raises(InputError, match="downloads are off"):
        load_table("gal_toy", data_dir=tmp_path / "d", mirror=mirror, offline=True)
    table, _ = load_table("gal_toy", data_dir=tmp_path / "d", mirror=mirror, offline=False)
    assert table.n_labels > 0 and (tmp_path / "d").is_dir()
    monkeypatch.setenv("CROWDOPT_OFFLINE", "maybe")
    err = _refused(load_table, "gal_toy", data_dir=tmp_path / "d")
    assert err is not None and str(err).startswith("CROWDOPT_OFFLINE:")


def test_read_solution_takes_numpy_values():
    inst = crowdopt.WorkerSelectInstance.from_arrays(2, scores=[3.0, 1.0, 2.0],
                                                     worker_ids=[10, 11, 12])
    sol = crowdopt.read_solution(inst, {"selected": list(np.array([12, 10])),
                                        "size": np.int64(2)})
    assert sol.selected.tolist() == [0, 2]
    named = crowdopt.WorkerSelectInstance.from_arrays(1, scores=[3.0, 1.0],
                                                      worker_ids=["ana", "ben"])
    assert crowdopt.read_solution(named, {"selected": [np.str_("ana")],
                                          "size": np.int64(1)}).selected.tolist() == [0]
    for bad in ({"selected": [np.float64(12.0), 10]}, {"selected": [np.True_, 10]},
                {"selected": [12, 10], "size": np.float64(2.0)}):
        assert _refused(crowdopt.read_solution, inst, bad) is not None, bad


# ----------------------------------------------------------------------------- files
INSTANCE = '{"problem": "labeler-set", "schema_version": 1, "qualities": [0.9, 0.8, 0.7]}\n'
LABELS = "task,worker,label\nt1,w1,1\nt1,w2,1\nt2,w1,0\nt2,w2,0\n"


def _file_commands(d: Path, bad: str) -> list[list[str]]:
    """Every command that reads a file the user names, with `bad` in that place."""
    (d / "i.json").write_text(INSTANCE)
    (d / "l.csv").write_text(LABELS)
    (d / "g.csv").write_text("task,label\nt1,1\nt2,0\n")
    i, lab, gold = str(d / "i.json"), str(d / "l.csv"), str(d / "g.csv")
    return [["solve", bad], ["compare", bad], ["certify", i, "--solution", bad],
            ["aggregate", bad], ["aggregate", lab, "--gold", bad], ["estimate", bad],
            ["select", lab, "--gold", bad, "--max-workers", "1"],
            ["select", lab, "--gold", gold, "--max-workers", "1", "--costs", bad,
             "--budget", "3"],
            ["replay", "lsol", bad], ["replay", "optkg", bad, "--budget", "2"],
            ["sweep", bad], ["simulate", "olas", "--data", bad, "--target", "y"],
            ["olas", "estimate-noise", "--golden", bad],
            ["olas", "tune-beta", "--golden", bad, "--features", lab],
            ["campaign", "init", str(d / "c.db"), "--policy", "optkg", "--items", bad,
             "--budget", "2"]]


def test_a_folder_or_a_device_is_one_line_naming_it_on_every_command(tmp_path, capsys):
    for bad, says in ((str(tmp_path), str(tmp_path)), ("/dev/zero", "/dev/zero"),
                      ("/dev/null", "/dev/null")):
        for argv in _file_commands(tmp_path, bad):
            code, err, out = _run(capsys, argv)
            assert code == 2 and out == "" and len(err) == 1 and says in err[0], (argv, err)


@pytest.mark.skipif(os.name != "posix" or shutil.which("setpriv") is None
                    or not hasattr(os, "geteuid") or os.geteuid() != 0,
                    reason="needs root and setpriv to run the command as another user")
def test_another_users_file_is_one_line_naming_it():
    """Tests run as root, who may read a mode-000 file: the command runs as user `nobody`
    (setpriv --reuid 65534) on files that root owns with mode 600, in a folder nobody may
    enter (755); it used to be a PermissionError traceback in solve, certify --solution and
    aggregate (and campaign init, whose reader the command line's own net catches)."""
    d = Path(tempfile.mkdtemp(prefix="crowdopt-perm-"))
    try:
        d.chmod(0o755)
        (d / "i.json").write_text(INSTANCE)
        (d / "s.json").write_text('{"selected": [0]}')
        (d / "l.csv").write_text(LABELS)
        (d / "s.json").chmod(0o600)
        (d / "l.csv").chmod(0o600)
        (d / "i.json").chmod(0o644)
        secret = d / "i600.json"
        secret.write_text(INSTANCE)
        secret.chmod(0o600)
        (d / "items.csv").write_text("item\na\nb\n")
        (d / "items.csv").chmod(0o600)
        (d / "out").mkdir(mode=0o777)
        (d / "out").chmod(0o777)  # nobody may create the campaign file there
        code = ("import sys; from crowdopt.cli import main; sys.exit(main(sys.argv[1:]))")
        for argv, name in ((["solve", str(secret)], str(secret)),
                           (["certify", str(d / "i.json"), "--solution", str(d / "s.json")],
                            str(d / "s.json")),
                           (["aggregate", str(d / "l.csv")], str(d / "l.csv")),
                           (["campaign", "init", str(d / "out" / "c.db"), "--policy", "optkg",
                             "--items", str(d / "items.csv"), "--budget", "2"],
                            str(d / "items.csv"))):
            r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                                sys.executable, "-c", code, *argv], capture_output=True,
                               text=True, timeout=120, cwd=d,
                               env={**os.environ, "HOME": str(d), "XDG_CACHE_HOME": str(d)})
            err = r.stderr.strip().splitlines()
            assert r.returncode == 2 and r.stdout == "" and len(err) == 1, (argv, r.stderr)
            assert "Permission denied" in err[0] and name in err[0], err
    finally:
        shutil.rmtree(d)


# ----------------------------------------------------------------------------- HTTP
def _asgi(app, method: str, path: str, *, body=None, token: str | None = None,
          query: bytes = b"") -> tuple[int, dict | str]:
    """One request through the ASGI app in this process (no server, no socket)."""
    raw = b"" if body is None else body if isinstance(body, bytes) else json.dumps(body).encode()
    scope = {"type": "http", "method": method, "path": path, "query_string": query,
             "headers": [(b"content-length", str(len(raw)).encode())]
             + ([(b"authorization", f"Bearer {token}".encode())] if token else [])}
    inbox = [{"type": "http.request", "body": raw, "more_body": False}]
    out: dict = {}

    async def receive():
        return inbox.pop(0) if inbox else {"type": "http.disconnect"}

    async def send(msg):
        out.update(status=msg["status"]) if msg["type"] == "http.response.start" else \
            out.update(body=msg.get("body", b""))

    asyncio.run(app(scope, receive, send))
    text = out["body"].decode("utf-8")
    return out["status"], json.loads(text) if text.startswith("{") else text


@pytest.fixture
def served(tmp_path):
    pytest.importorskip("uvicorn")
    from crowdopt.campaign import Campaign
    from crowdopt.campaign.http import create_app

    camp = Campaign.create(tmp_path / "h.db", policy="optkg", items=["a", "b", "c"], budget=6)
    app = create_app(str(tmp_path / "h.db"))
    yield app, camp.token
    for pool in app.state.pools:
        pool.shutdown()


@pytest.mark.parametrize("body, says", [
    (b'{"n": 1, "worker": "\\ud800"}', "U+D800"),  # valid JSON: was a 500 (UnicodeEncodeError)
    ({"n": 1, "worker": "w\u200b"}, "U+200B"),
    ({"n": 1, "worker": "w\x00"}, "U+0000"),
    ({"n": 1, "worker": 2**53 + 1}, "body.worker: expected an integer of magnitude <= 2^53"),
    ({"n": 1, "worker": True}, "worker:"),
    (b'{"n": 1, "lease": 1e-400}', "body.lease: expected a number within the float range"),
    (b'{"n": 1, "lease": 1e400}', "body.lease: expected a number within the float range"),
])
def test_http_bodies_by_the_same_rules(served, body, says):
    app, token = served
    status, doc = _asgi(app, "POST", "/next", body=body, token=token)
    assert status == 422 and says in doc["error"], (status, doc)


@pytest.mark.parametrize("path, query, says", [
    ("/status", b"limit=1&limit=2", "limit: expected one value"),
    ("/export", b"what=answers&what=labels", "what: expected one value"),
    ("/export", b"format=bogus", "query: expected parameters among what, offset, limit"),
    ("/status", b"offset=18446744073709551616", "offset: expected an integer of magnitude"),
    ("/status", b"limit=1_0", "limit: expected an integer"),
    ("/status", b"offset=%EF%BC%91", "offset: expected an integer"),
    ("/next", b"n=1", "query: expected parameters among none"),
])
def test_http_query_parameters_once_and_known(served, path, query, says):
    app, token = served
    method = "POST" if path == "/next" else "GET"
    status, doc = _asgi(app, method, path, token=token, query=query,
                        body={"n": 1} if method == "POST" else None)
    assert status == 422 and says in doc["error"], (status, doc)
    assert _asgi(app, "GET", "/status", token=token, query=b"offset=0&limit=10")[0] == 200


# ----------------------------------------------------------------------------- budgets
@pytest.mark.parametrize("budget", ["1", "3.6", "4.5"])
def test_replay_lsol_refuses_a_budget_its_testers_exceed(budget, capsys, data_dir):
    """bluebirds (108 tasks, 39 workers each): 10 testers take 390 labels, 3.61 per task, and
    the other 98 tasks need one each: a budget below 488/108 = 4.519 per task was spent past
    (3.61 per task at --budget 1) or left tasks unanswered (52 of 108 at 4); now refused naming
    the minimum, and at the minimum every task is answered within it."""
    _refused_cli(capsys, ["replay", "lsol", "bluebirds", "--budget", budget, "--runs", "1"],
                 "budget: expected a number >= 4.519 labels per task")


def test_replay_lsol_at_its_minimum_budget_answers_every_task_within_it(capsys, data_dir):
    code, err, out = _run(capsys, ["replay", "lsol", "bluebirds", "--budget", "4.519",
                                   "--runs", "2", "--json"])
    doc = json.loads(out)
    assert code == 0 and doc["coverage"]["fraction"] == 1.0
    assert doc["labels_per_task"] <= 4.519
