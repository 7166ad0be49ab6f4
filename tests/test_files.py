"""The one writer of output files (`crowdopt.files.write_file`) and the CLI's -o FILE options:
only regular files are written (temp file + rename in the same folder), an existing file only
with --force, a FIFO, directory, socket or a symlink to a device refused in one line, --force
or not. No test renames onto a device: the refusals come before any rename (a symlink to
/dev/null stands for a device; a rename would only replace the link)."""

from __future__ import annotations

import json
import os
import socket
import stat

import pytest

from crowdopt.cli import main
from crowdopt.errors import InputError
from crowdopt.files import write_file


@pytest.fixture
def odd(tmp_path):
    """Paths that are not regular files: a FIFO, a directory, a socket, a symlink to
    /dev/null."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    null = tmp_path / "null"
    null.symlink_to("/dev/null")
    yield {"fifo": fifo, "folder": folder, "sock": sock_path, "null": null}
    sock.close()


def _unchanged(odd) -> None:
    assert stat.S_ISFIFO(odd["fifo"].lstat().st_mode)
    assert odd["folder"].is_dir() and not any(odd["folder"].iterdir())
    assert stat.S_ISSOCK(odd["sock"].lstat().st_mode)
    assert odd["null"].is_symlink() and os.readlink(odd["null"]) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


@pytest.mark.parametrize("force", [False, True])
def test_what_is_not_a_regular_file_is_refused_force_or_not(tmp_path, odd, force):
    for name, what in (("fifo", "a FIFO"), ("folder", "a directory"), ("sock", "a socket"),
                       ("null", "a symlink to a character device")):
        with pytest.raises(InputError, match=what) as e:
            write_file(odd[name], "x\n", force=force)  # never blocks on the FIFO
        assert "\n" not in str(e.value) and "regular file" in str(e.value)
    _unchanged(odd)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "folder", "null", "sock"]


def test_an_existing_file_only_with_force_and_a_symlink_is_replaced_not_followed(tmp_path):
    f = tmp_path / "out.txt"
    assert write_file(f, "one\n") == f and f.read_text() == "one\n"
    with pytest.raises(InputError, match="--force"):
        write_file(f, "two\n")
    assert f.read_text() == "one\n"
    write_file(f, "two\n", force=True)
    assert f.read_text() == "two\n"
    target = tmp_path / "target.txt"
    target.write_text("keep\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    with pytest.raises(InputError, match="--force"):
        write_file(link, "new\n")
    write_file(link, "new\n", force=True)
    assert not link.is_symlink() and link.read_text() == "new\n"
    assert target.read_text() == "keep\n"  # never written through the link
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    with pytest.raises(InputError, match="--force"):
        write_file(dangling, "x")
    assert not (tmp_path / "nowhere").exists()
    secret = write_file(tmp_path / "s", "k\n", mode=0o600)
    assert secret.stat().st_mode & 0o777 == 0o600
    with pytest.raises(InputError, match="existing folder"):
        write_file(tmp_path / "no" / "f", "x")
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no leftovers


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_campaign_export_and_token_files_are_written_safely(tmp_path, odd, capsys):
    from crowdopt.campaign import Campaign

    db = tmp_path / "c.db"
    camp = Campaign.create(db, policy="optkg", items=["a", "b"], budget=2)
    camp.record([(q.item, "u", 1) for q in camp.next(2)])
    camp.close()
    for name in ("fifo", "sock", "null"):
        for force in ([], ["--force"]):
            assert main(["campaign", "export", str(db), "-o", str(odd[name]), *force]) == 2
            assert "regular file" in _err(capsys)
            assert main(["campaign", "token", str(db), "--role", "worker", "--worker", "u",
                         "-o", str(odd[name]), *force]) == 2
            assert "regular file" in _err(capsys)
    assert main(["campaign", "export", str(db), "-o", str(odd["folder"])]) == 2  # argparse
    assert "directory" in _err(capsys)
    _unchanged(odd)
    out = tmp_path / "a.csv"
    out.write_text("mine\n")
    assert main(["campaign", "export", str(db), "-o", str(out)]) == 2
    assert "--force" in _err(capsys) and out.read_text() == "mine\n"
    assert main(["campaign", "export", str(db), "-o", str(out), "--force"]) == 0
    assert out.read_text().startswith("task,worker,label")
    capsys.readouterr()
    tok = tmp_path / "w.token"
    tok.write_text("mine\n")
    assert main(["campaign", "token", str(db), "--role", "worker", "--worker", "u", "-o",
                 str(tok)]) == 2
    assert "--force" in _err(capsys) and tok.read_text() == "mine\n"
    assert main(["campaign", "token", str(db), "--role", "worker", "--worker", "u", "-o",
                 str(tok), "--force", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["token_file"] == str(tok)
    assert len(tok.read_text().strip()) > 20 and tok.stat().st_mode & 0o777 == 0o600
    # the campaign's own token file is rotated in place (a rename), no --force needed
    assert main(["campaign", "token", str(db), "--role", "read"]) == 0
    assert (tmp_path / "c.db.read-token").stat().st_mode & 0o777 == 0o600


def test_every_output_file_of_the_cli_is_written_safely(tmp_path, odd, capsys):
    inst = tmp_path / "i.json"
    assert main(["generate", "cltap", "-o", str(inst)]) == 0
    assert main(["generate", "cltap", "-o", str(inst)]) == 2
    assert "--force" in _err(capsys)
    assert main(["generate", "cltap", "-o", str(inst), "--force"]) == 0
    assert main(["solve", str(inst), "-o", str(odd["fifo"])]) == 2
    assert "a FIFO" in _err(capsys)
    res = tmp_path / "r.json"
    assert main(["solve", str(inst), "-o", str(res)]) == 0
    assert main(["solve", str(inst), "-o", str(res)]) == 2
    assert "--force" in _err(capsys)
    labels = tmp_path / "l.csv"
    labels.write_text("task,worker,label\nt1,w1,a\nt1,w2,b\nt2,w1,a\nt2,w2,a\n")
    for opt in ("-o", "--posteriors"):
        assert main(["aggregate", str(labels), opt, str(odd["null"])]) == 2
        assert "character device" in _err(capsys)
    for opt in ("-o", "--confusion"):
        assert main(["estimate", str(labels), opt, str(odd["sock"]), "--force"]) == 2
        assert "a socket" in _err(capsys)
    _unchanged(odd)
