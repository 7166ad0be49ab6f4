"""The one solution reader per problem (`crowdopt.solutions`, each problem's solution_from_dict):
every accepted form reads back what was written, every refused form is one InputError line
naming the field, and the shipped JSON Schema of each form agrees with the reader.

Property tests draw small instances with ids of every kind (none: positions; texts; integers
up to 2^53, negative ones too; texts and integers mixed), solutions in the accepted form (any
order where order means nothing), write them with solution_to_dict, pass them through JSON and
read them back; then mutate them into each refused form. `make test` runs a sample of each
(SAMPLE examples); `make soak` runs SOAK examples per problem.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import crowdopt
from crowdopt.cli import main
from crowdopt.errors import InputError
from crowdopt.problems import cltap, labeler_set, olas_assign, olas_select, worker_select
from crowdopt.registry import get_problem, problem_names
from crowdopt.validate import text_ok

SAMPLE, SOAK = 30, 250
# ids by the text rule (validate.text_ok): no Cc, Cf, Zl, Zp, Cs, no variation selector, NFC
TEXT_IDS = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zl", "Zp")),
                   min_size=1, max_size=6).filter(lambda s: s.strip() != "" and text_ok(s))
INT_IDS = st.integers(-(2**53), 2**53)


def ids_of(n: int):
    """None (the instance has no ids: positions), or n unique ids of one kind or mixed."""
    return st.one_of(st.none(),
                     st.lists(TEXT_IDS, min_size=n, max_size=n, unique=True),
                     st.lists(INT_IDS, min_size=n, max_size=n, unique=True),
                     st.lists(st.one_of(TEXT_IDS, INT_IDS), min_size=n, max_size=n,
                              unique=True))


@st.composite
def cases(draw, problem: str):
    """(instance, typed solution) of `problem`, small, with drawn ids and a drawn solution."""
    if problem == "olas-assign":
        m, n = draw(st.integers(1, 5)), draw(st.integers(1, 6))
        inst = olas_assign.make_instance([0.9] * m, [n] * m, [0.1] * n, "linear",
                                         draw(ids_of(m)), draw(ids_of(n)))
        z = draw(st.lists(st.integers(-1, m - 1), min_size=n, max_size=n))
        return inst, olas_assign.OlasAssignSolution(np.array(z, dtype=np.int64))
    if problem == "olas-select":
        m, n = draw(st.integers(1, 5)), draw(st.integers(1, 6))
        inst = olas_select.make_instance([0.9] * m, [n] * m, [0.1] * n, "linear", 0.5, None,
                                         draw(ids_of(m)), draw(ids_of(n)))
        sel = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
        lab = draw(st.lists(st.integers(0, m - 1), min_size=len(sel), max_size=len(sel)))
        return inst, olas_select.OlasSelectSolution(np.array(sel, dtype=np.int64),
                                                    np.array(lab, dtype=np.int64))
    if problem == "labeler-set":
        m = draw(st.integers(1, 7))
        inst = labeler_set.make_instance([0.7] * m, labeler_ids=draw(ids_of(m)))
        sel = sorted(draw(st.lists(st.integers(0, m - 1), unique=True, max_size=m)))
        return inst, labeler_set.LabelerSetSolution(np.array(sel, dtype=np.int64))
    if problem == "worker-select":
        m = draw(st.integers(1, 7))
        inst = worker_select.make_instance(max_workers=m, scores_=[1.0] * m,
                                           worker_ids=draw(ids_of(m)))
        sel = sorted(draw(st.lists(st.integers(0, m - 1), unique=True, max_size=m)))
        return inst, worker_select.WorkerSelectSolution(np.array(sel, dtype=np.int64))
    assert problem == "cltap"
    a, t = draw(st.integers(1, 4)), draw(st.integers(1, 5))
    k = draw(st.integers(1, t))
    inst = cltap.make_instance([[0.8] * k] * a, t, a * k)
    z = np.full((a, k), -1, dtype=np.int64)
    for j in range(a):
        row = draw(st.lists(st.integers(0, t - 1), unique=True, max_size=k))
        z[j, : len(row)] = row
    return inst, cltap.CltapSolution(z)


def same(problem: str, a, b) -> bool:
    if problem == "olas-assign":
        return np.array_equal(a.assignment, b.assignment)
    if problem == "olas-select":
        return (np.array_equal(a.selected, b.selected)
                and np.array_equal(a.assignment, b.assignment))
    if problem == "cltap":
        return np.array_equal(a.task_of, b.task_of)
    return np.array_equal(a.selected, b.selected)


def _shuffled(problem: str, doc: dict, draw) -> dict:
    """The same solution in another accepted order (sets; olas-select's pairs together)."""
    doc = json.loads(json.dumps(doc))
    if problem in ("labeler-set", "worker-select"):
        doc["selected"] = draw(st.permutations(doc["selected"]))
        if problem == "worker-select" and draw(st.booleans()):
            doc.pop("size")  # optional
    elif problem == "olas-select":
        pairs = draw(st.permutations(list(zip(doc["selected"], doc["assignment"]))))
        doc["selected"] = [p[0] for p in pairs]
        doc["assignment"] = [p[1] for p in pairs]
    return doc


def _validator(problem: str):
    pytest.importorskip("jsonschema", reason="the test extra checks the shipped schema")
    from crowdopt.schemas import validator
    return validator(f"solution-{problem}")


def _round_trip(problem: str, data) -> None:
    spec = get_problem(problem)
    inst, sol = data.draw(cases(problem))
    doc = json.loads(json.dumps(spec.solution_to_dict(inst, sol)))  # the writer, through JSON
    assert not list(_validator(problem).iter_errors(doc)), doc  # the schema accepts it
    back = crowdopt.read_solution(inst, doc)
    if problem == "olas-select":  # pairs keep their order; the reader keeps it too
        assert same(problem, back, sol)
    else:
        assert same(problem, back, sol), (doc, back, sol)
    other = _shuffled(problem, doc, data.draw)
    again = crowdopt.read_solution(inst, other)
    if problem == "olas-select":
        key = sorted(zip(again.selected.tolist(), again.assignment.tolist()))
        assert key == sorted(zip(sol.selected.tolist(), sol.assignment.tolist()))
    else:
        assert same(problem, again, sol)
    # the written form of what was read is what was written (a fixed point)
    assert json.loads(json.dumps(spec.solution_to_dict(inst, back))) == doc


# ----------------------------------------------------------------------------- refused forms
def _names(problem: str, inst) -> tuple[str, list | None, int]:
    """(list key, ids, count) of the entities a solution list names."""
    key, ids, count = {"olas-assign": ("assignment", "labeler_ids", "n_labelers"),
                       "olas-select": ("selected", "point_ids", "n_points"),
                       "labeler-set": ("selected", "labeler_ids", "n_labelers"),
                       "worker-select": ("selected", "worker_ids", "n_workers"),
                       "cltap": ("task_of", None, "t")}[problem]
    return key, getattr(inst, ids) if ids else None, getattr(inst, count)


def _not_an_entry(names: list | None, n: int, draw) -> tuple[object, bool]:
    """A value that names no entity of this instance, and whether the schema refuses it too."""
    kinds = ["bool", "float", "text", "negative", "out", "nested"]
    kind = draw(st.sampled_from(kinds))
    taken = set() if names is None else {(type(v), v) for v in names}
    if kind == "bool":
        return draw(st.booleans()), True
    if kind == "float":
        return draw(st.sampled_from([0.5, 1.0, 2.0, -3.0, 1e300])), False
    if kind == "nested":
        return draw(st.sampled_from([[0], {"id": 0}])), True
    if kind == "text":  # a text that is no id: '7' for the id or position 7, 'x\x00', ...
        v = draw(st.sampled_from(["0", "1", "x\x00", "\u202eab", "", " ", "zz-unknown"]))
        return (v, v in ("x\x00", "\u202eab", "", " ")) if (str, v) not in taken else ("??", False)
    if kind == "negative":
        v = draw(st.integers(-(2**53), -1))
        # the schema allows negative integers (ids may be negative): only the reader knows
        return (v, False) if (int, v) not in taken else (2**60, True)
    # out of range: a position past the end, or an integer id this instance does not have
    v = draw(st.integers(n, n + 1000))
    return (v, False) if (int, v) not in taken else (2**60, True)


@st.composite
def refused(draw, problem: str):
    """(instance, refused document, the field the error must name, schema refuses too)."""
    spec = get_problem(problem)
    inst, sol = draw(cases(problem))
    doc = json.loads(json.dumps(spec.solution_to_dict(inst, sol)))
    key, names, n = _names(problem, inst)
    forms = ["null", "array", "text", "unknown key", "missing key", "entry", "length"]
    if problem in ("labeler-set", "worker-select", "olas-select", "cltap"):
        forms.append("repeat")
    if problem == "worker-select":
        forms.append("size")
    form = draw(st.sampled_from(forms))
    if form == "null":
        return inst, None, "solution:", True
    if form == "array":
        return inst, [doc], "solution:", True
    if form == "text":
        return inst, json.dumps(doc), "solution:", True
    if form == "unknown key":
        bad = draw(st.sampled_from(["task_of", "selected", "assignment", "Selected", "extra",
                                    "size", "problem_"]))
        if bad in doc or (problem == "worker-select" and bad == "size"):
            bad = "extra"
        return inst, {**doc, bad: []}, f"solution.{bad}:", True
    if form == "missing key":
        drop = draw(st.sampled_from([k for k in doc if k != "size"]))
        return inst, {k: v for k, v in doc.items() if k != drop}, f"solution.{drop}:", True
    if form == "length":
        if problem == "olas-assign":
            extra = doc["assignment"] + [None]
            return inst, {"assignment": extra}, "solution.assignment:", False
        if problem == "olas-select":
            return (inst, {**doc, "assignment": doc["assignment"] + [doc["assignment"] or 0][:1]},
                    "solution.assignment:", False)
        if problem == "cltap":
            return inst, {"task_of": doc["task_of"] + [[]]}, "solution.task_of:", False
        form = "entry"  # sets have any length: an entry instead
    if form == "size":
        size = len(doc["selected"]) + draw(st.integers(1, 5))
        return inst, {**doc, "size": size}, "solution.size:", False
    rows = doc[key]
    if problem == "cltap":  # one row of task positions
        j = draw(st.integers(0, len(rows) - 1))
        row = rows[j]
        if form == "repeat" and row:
            return inst, {"task_of": [*rows[:j], row + [row[0]], *rows[j + 1:]]}, \
                f"solution.task_of[{j}][{len(row)}]:", True
        v, schema_too = _not_an_entry(None, n, draw)
        if isinstance(v, float) and v.is_integer() and 0 <= v < n:
            schema_too = False
        pos = draw(st.integers(0, len(row)))
        return inst, {"task_of": [*rows[:j], row[:pos] + [v] + row[pos:], *rows[j + 1:]]}, \
            f"solution.task_of[{j}][{pos}]:", schema_too or (isinstance(v, int) and v < 0)
    if form == "repeat" and rows:
        k = draw(st.integers(0, len(rows) - 1))
        new = rows + [rows[k]]
        out = {**doc, key: new}
        if problem == "olas-select":
            out["assignment"] = doc["assignment"] + [doc["assignment"][k]]
        if problem == "worker-select":
            out["size"] = len(new)
        return inst, out, f"solution.{key}[{len(rows)}]:", True
    if not rows:
        return inst, None, "solution:", True
    v, schema_too = _not_an_entry(names, n, draw)
    k = draw(st.integers(0, len(rows) - 1))
    new = [*rows[:k], v, *rows[k + 1:]]
    if problem == "olas-select" and draw(st.booleans()):  # a bad labeler instead of a point
        return (inst, {**doc, "assignment": [*doc["assignment"][:k], v,
                                            *doc["assignment"][k + 1:]]},
                f"solution.assignment[{k}]:", schema_too)
    return inst, {**doc, key: new}, f"solution.{key}[{k}]:", schema_too


def _refusal(problem: str, data) -> None:
    inst, doc, field, schema_too = data.draw(refused(problem))
    with pytest.raises(InputError) as err:
        crowdopt.read_solution(inst, doc) if not isinstance(doc, str) else \
            get_problem(problem).solution_from_dict(inst, doc)
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith(field), (field, msg, doc)
    if schema_too and isinstance(doc, dict | list) or doc is None:
        assert list(_validator(problem).iter_errors(doc)), (doc, "the schema accepts it")
    if not isinstance(doc, str) and not list(_validator(problem).iter_errors(doc)):
        assert not schema_too  # the reader is stricter only where a schema cannot say it


EXAMPLES = [pytest.param(SAMPLE, id="sample"),
            pytest.param(SOAK, id="soak", marks=pytest.mark.soak)]


def _explore(body, problem: str, examples: int) -> None:
    """Run body(problem, data) on `examples` hypothesis draws."""
    @settings(max_examples=examples, deadline=None,
              suppress_health_check=[HealthCheck.too_slow])
    @given(data=st.data())
    def run(data):
        body(problem, data)
    run()


@pytest.mark.parametrize("examples", EXAMPLES)
@pytest.mark.parametrize("problem", problem_names())
def test_read_of_write_is_the_solution(problem, examples):
    _explore(_round_trip, problem, examples)


@pytest.mark.parametrize("examples", EXAMPLES)
@pytest.mark.parametrize("problem", problem_names())
def test_each_refused_form_is_one_line_naming_the_field(problem, examples):
    _explore(_refusal, problem, examples)


# ----------------------------------------------------------------------------- named cases
LABELERS = [10, 11, 12, 13, 14]


def _olas_ids():
    return crowdopt.OlasAssignInstance.from_arrays([0.9, 0.8, 0.7, 0.6, 0.5], [3] * 5,
                                                   [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                                                   labeler_ids=LABELERS)


def _refused_with(inst, doc, field: str) -> str:
    """`crowdopt.certify(inst, doc)` (the API's door, as old as the package) refuses doc with
    one line naming field."""
    with pytest.raises(InputError) as err:
        crowdopt.certify(inst, doc, total_time_limit=5)
    assert str(err.value).startswith(field + ":") and "\n" not in str(err.value)
    return str(err.value)


def test_positions_are_not_read_where_the_instance_has_ids():
    inst = _olas_ids()
    _refused_with(inst, {"assignment": [0, 0, 1, 1, 2, 2]}, "solution.assignment[0]")
    _refused_with(inst, {"assignment": [10, 0, 11, 11, 12, 12]}, "solution.assignment[1]")
    ok = crowdopt.certify(inst, {"assignment": [10, 10, 11, 11, 12, 12]})
    assert ok.solution == {"assignment": [10, 10, 11, 11, 12, 12]}


def test_json_true_is_not_the_id_1_and_7_is_not_the_id_7_text():
    inst = crowdopt.LabelerSetInstance.from_arrays([0.8, 0.7, 0.6], labeler_ids=[1, 2, "7"])
    _refused_with(inst, {"selected": [True]}, "solution.selected[0]")
    _refused_with(inst, {"selected": [1.0]}, "solution.selected[0]")
    _refused_with(inst, {"selected": [7]}, "solution.selected[0]")
    assert crowdopt.certify(inst, {"selected": ["7", 1]}).solution == {"selected": [1, "7"]}
    plain = crowdopt.LabelerSetInstance.from_arrays([0.8, 0.7, 0.6])
    _refused_with(plain, {"selected": [True]}, "solution.selected[0]")
    _refused_with(plain, {"selected": [-1]}, "solution.selected[0]")
    _refused_with(plain, {"selected": [3]}, "solution.selected[0]")
    _refused_with(plain, {"selected": [0, 0]}, "solution.selected[1]")


def test_cltap_task_minus_one_and_repeats_are_refused():
    inst = crowdopt.generate("cltap", t=4, a=3)
    _refused_with(inst, {"task_of": [[-1], [], []]}, "solution.task_of[0][0]")
    _refused_with(inst, {"task_of": [[0, None], [], []]}, "solution.task_of[0][1]")
    _refused_with(inst, {"task_of": [[1, 1], [], []]}, "solution.task_of[0][1]")
    _refused_with(inst, {"task_of": [[4], [], []]}, "solution.task_of[0][0]")
    _refused_with(inst, {"task_of": [[0], []]}, "solution.task_of")


def test_worker_select_size_must_match_and_extra_keys_are_refused():
    inst = crowdopt.generate("worker-select")
    msg = _refused_with(inst, {"selected": [0, 1], "size": 5}, "solution.size")
    assert "2" in msg and "5" in msg
    _refused_with(inst, {"selected": [0, 1], "size": True}, "solution.size")
    assert crowdopt.certify(inst, {"selected": [1, 0], "size": 2}).solution["selected"] == [0, 1]
    _refused_with(crowdopt.generate("labeler-set"), {"selected": [0], "task_of": [[0]]},
                  "solution.task_of")


def test_a_solution_file_holding_null_is_refused_not_replaced(tmp_path, capsys):
    inst = tmp_path / "inst.json"
    assert main(["generate", "labeler-set", "-o", str(inst)]) == 0
    for text, found in (("null", "found null"), ("[]", "found an array"), ('"x"', "a string"),
                        ("3", "a number"), ('{"selected": [0], "extra": 1}', "solution.extra")):
        (tmp_path / "s.json").write_text(text)
        capsys.readouterr()
        code = main(["certify", str(inst), "--solution", str(tmp_path / "s.json")])
        cap = capsys.readouterr()
        assert code == 2 and cap.out == "" and cap.err.count("\n") == 1, (text, cap.err)
        assert found in cap.err and "Traceback" not in cap.err


def test_every_writer_emits_what_the_reader_accepts(tmp_path, capsys):
    """solve -o / --json, compare -o and certify --json, on instances with text ids, integer
    ids and none: the solution each writes reads back (also by its problem's schema)."""
    for problem in problem_names():
        spec = get_problem(problem)
        inst = spec.example()
        path = tmp_path / f"{problem}.json"
        path.write_text(json.dumps(spec.document(inst)))
        for argv in (["solve", str(path), "--json"], ["certify", str(path), "--json"]):
            capsys.readouterr()
            assert main(argv) in (0, 4)
            doc = json.loads(capsys.readouterr().out)
            assert not list(_validator(problem).iter_errors(doc["solution"])), (problem, argv)
            sol = crowdopt.read_solution(inst, doc)
            assert spec.evaluate(inst, sol).objective == pytest.approx(doc["objective"])
