"""Every batch command takes --jobs, --resume, --fresh and
--scheduler with one meaning, and nothing in an output directory is lost by accident."""

from __future__ import annotations

import json

import pytest
from cli_tree import leaves, options

from crowdopt.cli import main

BATCH = [("simulate", "lsol"), ("simulate", "optkg"), ("simulate", "olas"), ("reproduce", "cltap"),
         ("reproduce", "lsol"), ("reproduce", "olas"), ("reproduce", "optkg"),
         ("reproduce", "selection"), ("sweep",), ("certify",)]


def test_every_batch_command_has_the_execution_flags():
    parsers = {path: p for path, p, _ in leaves()}
    for path in BATCH:
        flags = {s for a in options(parsers[path]) for s in a.option_strings}
        assert {"--jobs", "--resume", "--fresh", "--scheduler"} <= flags, path
    helps = {a.help for path in BATCH for a in options(parsers[path])
             if "--scheduler" in a.option_strings}
    assert len(helps) == 1  # one meaning


def _lines(err: str) -> list[str]:
    return [ln for ln in err.strip().splitlines() if ln]


def test_second_simulate_run_keeps_the_first_results(tmp_path, capsys):
    out = tmp_path / "d"
    base = ["simulate", "lsol", "--T", "100", "--M", "3", "-o", str(out), "--quiet", "--json"]
    assert main([*base, "--runs", "2"]) == 0
    first = (out / "results.jsonl").read_text()
    capsys.readouterr()
    assert main([*base, "--runs", "2", "--p-low", "0.7"]) == 2  # other parameters: refused
    err = _lines(capsys.readouterr().err)
    assert len(err) == 1 and "--fresh" in err[0]
    assert (out / "results.jsonl").read_text() == first
    assert main([*base, "--runs", "2"]) == 0  # the same command again: resumed, not re-run
    assert (out / "results.jsonl").read_text() == first
    capsys.readouterr()
    assert main([*base, "--runs", "2", "--p-low", "0.7", "--fresh"]) == 0
    assert (out / "results.jsonl").read_text() != first


def test_resume_or_fresh_need_an_output_directory(capsys):
    assert main(["simulate", "optkg", "--K", "3", "--budgets", "6", "--runs", "1",
                 "--resume"]) == 2
    assert "-o" in capsys.readouterr().err
    assert main(["simulate", "lsol", "--T", "50", "--runs", "1", "-o", "x", "--resume",
                 "--fresh"]) == 2


def test_certify_one_file_refuses_batch_flags(tmp_path, capsys):
    inst = str(tmp_path / "i.json")
    main(["generate", "cltap", "-o", inst])
    capsys.readouterr()
    for flag in (["--scheduler", "tcp://x:1"], ["--resume"], ["--fresh"]):
        assert main(["certify", inst, *flag]) == 2
        err = _lines(capsys.readouterr().err)
        assert len(err) == 1 and flag[0] in err[0]


def test_certify_dir_resumes_from_its_output(tmp_path, capsys):
    d = tmp_path / "inst"
    d.mkdir()
    for p in ("cltap", "worker-select"):
        main(["generate", p, "-o", str(d / f"{p}.json")])
    out = tmp_path / "c.json"
    assert main(["certify", str(d), "-o", str(out), "--quiet"]) == 0
    tasks = (tmp_path / "c.json.tasks.jsonl").read_text()
    capsys.readouterr()
    assert main(["certify", str(d), "-o", str(out), "--quiet", "--json"]) == 0
    assert (tmp_path / "c.json.tasks.jsonl").read_text() == tasks  # nothing re-run
    assert len(json.loads(capsys.readouterr().out)["certificates"]) == 2
    assert len(json.loads(out.read_text())["certificates"]) == 2


@pytest.mark.parametrize("argv", [["sweep", "{cfg}", "-o", "{out}"]])
def test_sweep_same_config_resumes(argv, tmp_path, capsys):
    cfg = tmp_path / "s.toml"
    cfg.write_text('function = "crowdopt.experiments.executor:busy_task"\nseeds = [0, 1]\n'
                   "[grid]\nwork = [10]\n")
    args = [a.format(cfg=cfg, out=tmp_path / "o") for a in argv] + ["--quiet"]
    assert main(args) == 0
    first = (tmp_path / "o" / "results.jsonl").read_text()
    assert main(args) == 0
    assert (tmp_path / "o" / "results.jsonl").read_text() == first
