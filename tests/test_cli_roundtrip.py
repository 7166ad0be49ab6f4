"""Issue 19 items 3 and 10: every result file crowdopt writes is accepted where a solution is
expected, and booleans are JSON booleans."""

from __future__ import annotations

import json

import pytest

from crowdopt.cli import _json_default, main

PROBLEMS = ["olas-assign", "olas-select", "labeler-set", "cltap", "worker-select"]


def _run(capsys, argv):
    code = main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("problem", PROBLEMS)
def test_certify_accepts_solve_output_and_certificates(problem, tmp_path, capsys):
    inst, res, cert = (str(tmp_path / n) for n in ("i.json", "r.json", "c.json"))
    assert _run(capsys, ["generate", problem, "-o", inst])[0] == 0
    assert _run(capsys, ["solve", inst, "--method", "fast", "-o", res])[0] == 0
    code, out, err = _run(capsys, ["certify", inst, "--solution", res, "--json"])
    assert code == 0, err
    doc = json.loads(out)
    assert doc["primal_source"] == "given"
    assert doc["solution"] == json.loads(open(res).read())["solution"]
    assert isinstance(doc["proven_optimal"], bool) and isinstance(doc["certified"], bool)
    # a certificate is a result file too
    with open(cert, "w") as f:
        f.write(out)
    code, out2, err = _run(capsys, ["certify", inst, "--solution", cert, "--json"])
    assert code == 0, err
    assert json.loads(out2)["upper"] == doc["upper"]


def test_certify_refuses_another_problems_result(tmp_path, capsys):
    a, b, res = (str(tmp_path / n) for n in ("a.json", "b.json", "r.json"))
    main(["generate", "cltap", "-o", a])
    main(["generate", "olas-assign", "-o", b])
    main(["solve", a, "--method", "fast", "-o", res])
    capsys.readouterr()
    code, _, err = _run(capsys, ["certify", b, "--solution", res])
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and "cltap" in lines[0]


def test_certify_help_names_the_formats(capsys):
    with pytest.raises(SystemExit):
        main(["certify", "--help"])
    assert "solve -o" in capsys.readouterr().out


def test_json_default_never_writes_a_repr():
    import numpy as np

    assert _json_default(np.bool_(False)) is False
    assert json.dumps({"x": np.bool_(True)}, default=_json_default) == '{"x": true}'
    with pytest.raises(TypeError):
        _json_default(object())
