"""Round trips: every document the package writes with a solution in it is
accepted by `crowdopt certify --solution`, for all five problems."""

from __future__ import annotations

import json

import pytest

from crowdopt.cli import main
from crowdopt.registry import problem_names


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("problem", problem_names())
def test_certify_reads_solve_compare_and_certify_outputs(problem, tmp_path, capsys):
    inst = tmp_path / "inst.json"
    assert _run(capsys, "generate", problem, "--seed", "1", "-o", str(inst))[0] == 0
    solved = tmp_path / "solve.json"
    assert _run(capsys, "solve", str(inst), "-o", str(solved))[0] == 0
    code, out, err = _run(capsys, "certify", str(inst), "--solution", str(solved), "--json")
    assert code == 0, err
    cert = json.loads(out)
    assert cert["primal_source"] == "given" and cert["certified"] is True
    # the certified objective is the solved one: the solution was read, not re-found
    assert cert["objective"] == pytest.approx(json.loads(solved.read_text())["objective"])

    cert_file = tmp_path / "cert.json"
    cert_file.write_text(out)
    code, out2, err = _run(capsys, "certify", str(inst), "--solution", str(cert_file), "--json")
    assert code == 0, err
    assert json.loads(out2)["objective"] == pytest.approx(cert["objective"])

    comp = tmp_path / "compare.json"
    assert _run(capsys, "compare", str(inst), "-o", str(comp))[0] in (0, 4)
    best = json.loads(comp.read_text())["best"]
    code, out3, err = _run(capsys, "certify", str(inst), "--solution", str(comp), "--json")
    assert code == 0, err
    assert json.loads(out3)["objective"] == pytest.approx(best["objective"])


def test_solution_of_another_problem_is_one_line_exit_2(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _run(capsys, "generate", "labeler-set", "-o", str(a))
    _run(capsys, "generate", "cltap", "-o", str(b))
    sol = tmp_path / "sol.json"
    _run(capsys, "solve", str(a), "-o", str(sol))
    code, out, err = _run(capsys, "certify", str(b), "--solution", str(sol))
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "solution.problem" in err and "labeler-set" in err


def test_certify_help_names_the_accepted_formats(capsys):
    with pytest.raises(SystemExit):
        main(["certify", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for what in ("crowdopt solve -o FILE", "crowdopt certify --json", "crowdopt compare -o FILE",
                 "bare solution"):
        assert what in text
