"""Instance files: every malformed or mutated instance gives the one clean InputError."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdopt.errors import InputError
from crowdopt.instances import dump_instance, load_instance, parse_instance
from crowdopt.registry import RunOptions, get_problem, problem_names

BASE = {"problem": "olas-assign", "schema_version": 1, "noise": "linear",
        "accuracies": [0.9, 0.8, 0.7], "capacities": [2, 2, 2], "entropies": [0.6, 0.5, 0.4]}

junk = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.floats(allow_nan=True, allow_infinity=True),
                 st.text(max_size=5), st.lists(st.floats(allow_nan=True), max_size=4),
                 st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(sorted(BASE) + ["extra", "labeler_ids", "point_ids"]), value=junk,
       index=st.integers(0, 3), drop=st.booleans())
@pytest.mark.slow
def test_mutated_instances_fail_cleanly(key, value, index, drop):
    doc = json.loads(json.dumps(BASE))
    if drop and key in doc:
        del doc[key]
    elif isinstance(doc.get(key), list) and index < len(doc[key]) and not isinstance(value, list):
        doc[key][index] = value
    else:
        doc[key] = value
    try:
        spec, inst = parse_instance(doc)
    except InputError as exc:
        msg = str(exc)
        assert msg and "\n" not in msg and "expected" in msg
        return
    # accepted: then it must evaluate and solve without surprises
    r = spec.default("fast").run(inst, None)
    assert r.status in ("feasible", "infeasible")


@pytest.mark.parametrize("text,needle", [
    ("", "empty file"),
    ("   \n", "empty file"),
    ("{not json", "valid JSON"),
    ("[1, 2]", "JSON object"),
    ('{"accuracies": []}', "problem"),
    ('{"problem": "nope"}', "one of"),
    ('{"problem": "olas-assign", "schema_version": 9}', "schema_version"),
])
def test_bad_files(tmp_path, text, needle):
    f = tmp_path / "x.json"
    f.write_text(text)
    with pytest.raises(InputError, match=needle):
        load_instance(str(f))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(InputError, match="existing file"):
        load_instance(str(tmp_path / "nope.json"))
    with pytest.raises(InputError, match="a regular file, found a directory"):
        load_instance(str(tmp_path))


@pytest.mark.parametrize("name", problem_names())
def test_every_problem_round_trips_generated_instances(name, tmp_path):
    spec = get_problem(name)
    for seed in range(3):
        inst = spec.generate(seed)
        f = tmp_path / f"{seed}.json"
        f.write_text(dump_instance(spec, inst))
        spec2, inst2 = load_instance(str(f))
        assert spec2 is spec
        assert json.dumps(spec.to_dict(inst2), sort_keys=True) == json.dumps(spec.to_dict(inst), sort_keys=True)


@pytest.mark.parametrize("name", problem_names())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_problem_rejects_mutations_cleanly(name, data):
    """Any problem's instance with one field (or one list entry) replaced by junk either loads
    and solves with its fast path, or fails with the one clean InputError."""
    spec = get_problem(name)
    doc = json.loads(dump_instance(spec, spec.generate(0)))
    key = data.draw(st.sampled_from(sorted(doc) + ["extra"]), label="key")
    value = data.draw(junk, label="value")
    target = doc.get(key)
    if isinstance(target, list) and target and data.draw(st.booleans(), label="in_list"):
        k = data.draw(st.integers(0, len(target) - 1), label="index")
        if isinstance(target[k], list) and target[k]:
            target[k][data.draw(st.integers(0, len(target[k]) - 1))] = value
        else:
            target[k] = value
    elif data.draw(st.booleans(), label="drop") and key in doc:
        del doc[key]
    else:
        doc[key] = value
    try:
        spec2, inst = parse_instance(doc)
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    out = spec2.default("fast").run(inst, RunOptions(time_limit=1.0))
    if out.solution is not None:
        spec2.evaluate(inst, out.solution)
