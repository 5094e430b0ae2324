"""Output files are written all or none (hetsched.outputs, docs/robustness.md): staged,
checked, renamed together; on a full disk, a directory in the way or an output directory
removed mid-run, one line saying what was kept, exit status 2, no temporaries.

A full disk is made in-process: ``hetsched.outputs._open`` gives files that take a given
number of bytes and then fail with ENOSPC, in write() and again in close() (as a buffered
file does when its buffer cannot be written), so the tests need neither root nor a small
file system. ``hetsched run ... --out F/o`` on a 64-KB tmpfs gave the same lines.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from pathlib import Path

import pytest

from hetsched import outputs
from hetsched.errors import InputError, OutputError
from hetsched.outputs import OutputSet

RUN = ["run", "--platform", "juno-r0", "--workload", "periodic:n=4", "--duration", "0.1"]
NO_SPACE = os.strerror(errno.ENOSPC)


class FullDisk:
    """``outputs._open`` on a file system with ``room`` bytes left (for the paths ``where``
    accepts; the others are written as usual)."""

    def __init__(self, room: int, where=lambda path: True):
        self.room, self.where, self.closed = room, where, []

    def __call__(self, path: Path):
        f = open(path, "wb")
        if not self.where(path):
            return f
        disk = self

        class Full:
            def write(self, data: bytes) -> int:
                n = min(len(data), disk.room)
                f.write(data[:n])
                disk.room -= n
                if n < len(data):
                    raise OSError(errno.ENOSPC, NO_SPACE)
                return n

            def flush(self) -> None:
                f.flush()

            def fileno(self) -> int:
                return f.fileno()

            def close(self) -> None:
                f.close()  # the descriptor goes, then the error, as BufferedWriter.close() does
                disk.closed.append(path)
                if disk.room == 0:
                    raise OSError(errno.ENOSPC, NO_SPACE)

        return Full()


def hetsched(monkeypatch, capsys, *args) -> tuple[int, str, list[str]]:
    """``hetsched ARGS`` in this process: (exit status, stdout with its spaces and line
    breaks each made one space (rich breaks lines at 80 columns here), stderr's lines)."""
    from hetsched import cli

    monkeypatch.setattr(sys, "argv", ["hetsched", *map(str, args)])
    with pytest.raises(SystemExit) as e:
        cli.main()
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err, cap.err
    return e.value.code, " ".join(cap.out.split()), cap.err.splitlines()


def one_line(err: list[str], *needles: str) -> str:
    assert len(err) == 1 and err[0].startswith("hetsched: error: "), err
    for n in needles:
        assert n in err[0], (n, err[0])
    return err[0]


def every_file(d: Path) -> list[str]:
    return sorted(str(p.relative_to(d)) for p in d.rglob("*")) if d.exists() else []


# ------------------------------------------------------------------ the set itself

def test_a_set_is_renamed_together_and_leaves_no_temporary(tmp_path):
    with OutputSet(tmp_path / "o") as outs:
        outs.stream("a.txt").write("one\n")
        outs.write("b.bin", b"\x00two")
        assert every_file(tmp_path / "o") == [f".a.txt.tmp-{os.getpid()}", f".b.bin.tmp-{os.getpid()}"]
        assert outs.commit() == [tmp_path / "o" / "a.txt", tmp_path / "o" / "b.bin"]
    assert every_file(tmp_path / "o") == ["a.txt", "b.bin"]
    assert (tmp_path / "o" / "a.txt").read_text() == "one\n"


def test_a_full_disk_and_a_failing_close_still_remove_every_temporary(tmp_path, monkeypatch):
    full = FullDisk(room=10)
    monkeypatch.setattr(outputs, "_open", full)
    outs = OutputSet(tmp_path / "F" / "o")
    first, second = outs.stream("trace.txt"), outs.stream("timeseries.csv")
    with pytest.raises(OutputError) as e:
        first.write(b"x" * 100)
    assert e.value.source == str(tmp_path / "F" / "o" / "trace.txt") and e.value.field == "--out"
    assert NO_SPACE in str(e.value) and "room for the file" in str(e.value)
    second.write(b"")  # still open: its close() will fail too
    outs.abort()
    assert len(full.closed) == 2  # both closed, though each close() raised
    assert every_file(tmp_path) == []  # the temporaries, then the directories the set made


def test_a_directory_in_the_way_is_found_before_any_rename(tmp_path):
    (tmp_path / "result.json").write_text("earlier\n")
    outs = OutputSet(tmp_path)
    outs.write("result.json", "new\n")
    outs.write("phases.txt", "new\n")
    (tmp_path / "phases.txt").mkdir()
    with pytest.raises(OutputError, match="phases.txt to be a file or absent \\(it is a directory\\)"):
        outs.commit()
    assert (tmp_path / "result.json").read_text() == "earlier\n"  # not renamed, though staged first
    assert every_file(tmp_path) == ["phases.txt", "result.json"]
    with pytest.raises(OutputError, match="it is a directory"):  # and before a run, on asking
        OutputSet(tmp_path).check("result.json", "phases.txt")


def test_a_rename_failing_part_way_puts_the_earlier_ones_back(tmp_path, monkeypatch):
    (tmp_path / "a").write_text("earlier a\n")
    outs = OutputSet(tmp_path)
    for name in ("a", "b", "c"):
        outs.write(name, f"new {name}\n")
    real = os.replace

    def replace(src, dst):
        if Path(dst).name == "c":  # the directory went away between the check and the rename
            raise OSError(errno.ENOENT, "No such file or directory")
        return real(src, dst)

    monkeypatch.setattr(outputs.os, "replace", replace)
    with pytest.raises(OutputError, match="stay in place"):
        outs.commit()
    assert every_file(tmp_path) == ["a"] and (tmp_path / "a").read_text() == "earlier a\n"


def test_the_directory_removed_while_writing(tmp_path):
    outs = OutputSet(tmp_path / "o")
    outs.stream("trace.txt").write(b"events\n")
    shutil.rmtree(tmp_path / "o")
    with pytest.raises(OutputError) as e:
        outs.commit()
    assert str(e.value) == (f"{tmp_path / 'o' / 'trace.txt'}: --out: expected its directory to stay in place "
                            "while the command runs (it was removed)")
    assert every_file(tmp_path) == []


def test_an_earlier_writers_files_go_once_the_new_ones_are_in_place(tmp_path):
    for name in ("trace.txt", "timeseries.csv", "plots/run_energy.png", "plots/compare_energy.png"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("earlier\n")
    (tmp_path / "trace.json").mkdir()  # not a file hetsched wrote: left alone
    with OutputSet(tmp_path, replaces=("trace.*", "timeseries.csv", "plots/run_*")) as outs:
        outs.write("trace.txt", "new\n")
        outs.commit()
    assert outs.removed == [tmp_path / "timeseries.csv", tmp_path / "plots" / "run_energy.png"]
    assert every_file(tmp_path) == ["plots", "plots/compare_energy.png", "trace.json", "trace.txt"]
    assert (tmp_path / "trace.txt").read_text() == "new\n"


def test_a_dead_writers_temporaries_are_removed_a_live_ones_kept(tmp_path):
    import subprocess

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True).stdout.strip()
    for name in (f".result.json.tmp-{dead}", f".result.json.tmp-{dead}.old", f".trace.txt.tmp-{os.getppid()}"):
        (tmp_path / name).write_text("")
    OutputSet(tmp_path)
    assert every_file(tmp_path) == [f".trace.txt.tmp-{os.getppid()}"]


# ------------------------------------------------------------------ run, replay, plot

def test_run_on_a_full_disk_leaves_nothing_and_says_so(tmp_path, monkeypatch, capsys):
    """The run that gave an OSError traceback, exit status 1 and .trace.txt.tmp-PID and
    .timeseries.csv.tmp-PID behind on a 64-KB tmpfs."""
    monkeypatch.setattr(outputs, "_open", FullDisk(room=4096))
    (tmp_path / "F").mkdir()
    out = tmp_path / "F" / "o"
    code, stdout, err = hetsched(monkeypatch, capsys, *RUN, "--trace", "--trace-format", "ftrace", "--timeseries",
                                 "--out", out)
    assert code == 2 and stdout == ""
    one_line(err, str(out), NO_SPACE, f"nothing written to {out}")
    assert every_file(tmp_path) == ["F"]  # o, which the run made, went with its temporaries


def test_plots_on_a_full_disk_keep_the_runs_files_and_say_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(outputs, "_open", FullDisk(room=0, where=lambda p: p.parent.name == "plots"))
    out = tmp_path / "o"
    code, stdout, err = hetsched(monkeypatch, capsys, *RUN, "--plot", "--out", out)
    assert code == 2 and f"wrote {out / 'result.json'}" in stdout
    one_line(err, str(out / "plots"), NO_SPACE, f"; kept {out / 'result.json'}, {out / 'phases.txt'}")
    assert every_file(out) == ["phases.txt", "result.json"]  # no empty plots/


def test_a_directory_where_a_file_goes_is_refused_before_the_run(tmp_path, monkeypatch, capsys):
    """It used to move the trace and result.json into place, then die on phases.txt."""
    (tmp_path / "phases.txt").mkdir()
    code, stdout, err = hetsched(monkeypatch, capsys, *RUN, "--trace", "--out", tmp_path)
    assert code == 2 and stdout == ""
    one_line(err, str(tmp_path / "phases.txt"), "it is a directory", f"nothing written to {tmp_path}")
    assert every_file(tmp_path) == ["phases.txt"]


def test_the_output_directory_removed_mid_run(tmp_path, monkeypatch, capsys):
    from hetsched import cli

    drain = cli._RunFiles.drain

    def removing(self):
        shutil.rmtree(self.outs.directory, ignore_errors=True)
        drain(self)

    monkeypatch.setattr(cli._RunFiles, "drain", removing)
    out = tmp_path / "o"
    code, stdout, err = hetsched(monkeypatch, capsys, *RUN, "--trace", "--out", out)
    assert code == 2 and stdout == ""
    one_line(err, str(out), "stay in place while the command runs (it was removed)")
    assert every_file(tmp_path) == []


def test_a_second_run_replaces_the_files_of_the_first(tmp_path, monkeypatch, capsys):
    """An earlier run's trace, time series and plots do not stay beside the new result:
    they are removed, in one line."""
    code, _, _ = hetsched(monkeypatch, capsys, *RUN, "--trace", "--trace-format", "ftrace", "--timeseries", "--plot",
                          "--out", tmp_path)
    assert code == 0 and "trace.txt" in every_file(tmp_path) and any(f.startswith("plots/") for f in every_file(tmp_path))
    code, stdout, err = hetsched(monkeypatch, capsys, *RUN, "--out", tmp_path)
    assert code == 0 and err == []
    assert every_file(tmp_path) == ["phases.txt", "result.json"]
    assert stdout.count("removed") == 1 and stdout.endswith(
        f"removed timeseries.csv, trace.txt and 4 plots of an earlier run in {tmp_path}, which this run does not write")


def test_a_dangling_symbolic_link_as_out(tmp_path, monkeypatch, capsys):
    (tmp_path / "o").symlink_to(tmp_path / "nowhere")
    code, _, err = hetsched(monkeypatch, capsys, *RUN, "--out", tmp_path / "o")
    assert code == 2
    one_line(err, f"{tmp_path / 'o'}: --out: expected an output directory (this is a symbolic link to "
                  f"{tmp_path / 'nowhere'}, which does not exist)")
    code, _, err = hetsched(monkeypatch, capsys, *RUN, "--out", tmp_path / "o" / "sub")
    assert code == 2
    one_line(err, f"({tmp_path / 'o'} is a symbolic link to {tmp_path / 'nowhere'}, which does not exist)")


# ------------------------------------------------------------------ sweep

def test_a_directory_named_sweep_parquet(tmp_path, monkeypatch, capsys):
    grid = tmp_path / "grid.yaml"
    grid.write_text("platforms: [juno-r0]\nworkloads: ['periodic:n=4']\nschedulers: [eas]\nduration: 0.1\n")
    (tmp_path / "o" / "sweep.parquet").mkdir(parents=True)
    for resume in ([], ["--resume"]):
        code, _, err = hetsched(monkeypatch, capsys, "sweep", grid, "--out", tmp_path / "o", *resume)
        assert code == 2
        one_line(err, str(tmp_path / "o" / "sweep.parquet"), "it is a directory")
    from hetsched.runner import read_rows

    with pytest.raises(InputError, match="it is a directory"):
        read_rows(tmp_path / "o", "sweep.parquet")


# ------------------------------------------------------------------ reproduce and its journal

@pytest.mark.parametrize("name", ["runs.jsonl", "fa-cfs.csv", "report.html"])
def test_a_directory_where_a_reproductions_file_goes(tmp_path, monkeypatch, capsys, name):
    (tmp_path / name).mkdir()
    code, stdout, err = hetsched(monkeypatch, capsys, "reproduce", "fa-cfs", "--smoke", "--jobs", "1",
                                 "--out", tmp_path)
    assert code == 2 and stdout == ""
    one_line(err, str(tmp_path / name), "it is a directory")
    assert every_file(tmp_path) == [name]  # refused before any run: no journal either


def test_a_journal_line_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    from hetsched.reproduce import journal

    j = journal.RunJournal(tmp_path, resume=False, build="b")
    assert j.add("h1", "one", {"x": 1.0})
    real, calls = journal._write, []

    def filling(fd, data):
        calls.append(len(data))
        if len(calls) == 1:
            return real(fd, data[:len(data) // 2])  # half the line fits
        raise OSError(errno.ENOSPC, NO_SPACE)

    monkeypatch.setattr(journal, "_write", filling)
    with pytest.raises(OutputError) as e:
        j.add("h2", "two", {"x": 2.0})
    j.close()
    assert e.value.kept == f"1 completed run in {tmp_path / 'runs.jsonl'} (continue with --resume)"
    assert (tmp_path / "runs.jsonl").read_text() == '{"run": "h1", "build": "b", "label": "one", "result": {"x": 1.0}}\n'


def test_a_torn_or_deep_journal_line_is_dropped_with_a_warning(tmp_path):
    from hetsched.reproduce.journal import RunJournal

    good = '{"run": "h1", "build": "b", "result": {"x": 1.0}}\n'
    (tmp_path / "runs.jsonl").write_text(good + "[" * 100_000 + "\n" + good + '{"run": "h2", "bu')
    warned: list[str] = []
    j = RunJournal(tmp_path, resume=True, build="b", warn=warned.append)
    j.close()
    assert j.stored == {"h1": {"x": 1.0}}
    assert warned == [f"{tmp_path / 'runs.jsonl'}: line 2 and 1 more: not a journal record (at most 64 levels of "
                      "nested arrays and objects): dropped, its run runs again"]
    assert (tmp_path / "runs.jsonl").read_text() == good


def test_reproduce_on_a_full_disk_stops_with_the_runs_it_journaled(tmp_path, monkeypatch, capsys):
    """It gave a traceback in journal.py and left half a line in runs.jsonl."""
    from hetsched.reproduce import journal

    real, state = journal._write, {"whole": 0, "part": False}

    def filling(fd, data):  # two lines fit, then a third of the third
        if state["whole"] < 2:
            state["whole"] += 1
            return real(fd, data)
        if not state["part"]:
            state["part"] = True
            return real(fd, data[:len(data) // 3])
        raise OSError(errno.ENOSPC, NO_SPACE)

    monkeypatch.setattr(journal, "_write", filling)
    code, stdout, err = hetsched(monkeypatch, capsys, "reproduce", "fa-cfs", "--smoke", "--jobs", "1",
                                 "--out", tmp_path)
    assert code == 2
    journal_file = tmp_path / "runs.jsonl"
    one_line(err, f"{journal_file}: --out: expected room for the file", NO_SPACE,
             f"; kept 2 completed runs in {journal_file} (continue with --resume)")
    text = journal_file.read_text()
    assert text.endswith("\n") and len(text.splitlines()) == 2
    assert every_file(tmp_path) == ["runs.jsonl"]  # no study file, no staging directory


# ------------------------------------------------------------------ record

def test_record_on_a_full_disk_leaves_no_temporary(tmp_path, monkeypatch):
    """tracefs replaced by a directory holding a trace: the recorded file goes through
    an OutputSet in the user's directory, whose other temporaries it leaves alone."""
    from hetsched.traces import record as rec

    class Session:
        def __init__(self, buffer_kb, use_instance):
            self.dir, self.enabled, self.instance = tmp_path / "tracefs", ["sched_switch"], None
            self.dir.mkdir()
            (self.dir / "trace").write_text("# tracer: nop\n" * 1000)

        def start(self) -> None:
            pass

        def stop(self) -> None:
            pass

        def overruns(self) -> int:
            return 0

        def restore(self) -> list[str]:
            return []

    monkeypatch.setattr(rec, "_Session", Session)
    monkeypatch.setattr(outputs, "_open", FullDisk(room=100))
    other = tmp_path / "here" / ".notes.txt.tmp-1"  # not hetsched's: a dead PID's, but another name
    other.parent.mkdir()
    other.write_text("")
    with pytest.raises(OutputError, match=f"{tmp_path / 'here' / 'run.trace'}: --out: expected room for the file"):
        rec.record(["true"], tmp_path / "here" / "run.trace")
    assert every_file(tmp_path / "here") == [".notes.txt.tmp-1"]


# ------------------------------------------------------------------ Learning EAS's files

@pytest.mark.parametrize("option, name", [("learning.state", "s.json"), ("learning.record", "r.csv")])
def test_learning_files_on_a_full_disk(tmp_path, monkeypatch, capsys, option, name):
    monkeypatch.setattr(outputs, "_open", FullDisk(room=0, where=lambda p: p.parent.name == "st"))
    (tmp_path / "st").mkdir()
    code, _, err = hetsched(monkeypatch, capsys, "run", "--scheduler", "learning-eas", "--platform", "gs101",
                            "--workload", "game:fps=60", "--duration", "0.2", "--set", f"{option}={tmp_path / 'st' / name}",
                            "--out", tmp_path / "o")
    assert code == 2
    one_line(err, f"{tmp_path / 'st' / name}: {option}: expected room for the file", NO_SPACE)
    assert every_file(tmp_path / "st") == []
