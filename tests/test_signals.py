"""Ctrl-C (SIGINT), SIGTERM and SIGKILL on the commands that run for long: one line saying
what stopped and what was kept, exit status 130 / 143, nothing half-written in OUT, no
worker process left behind, and one writer at a time in an OUT.

Every command runs as a real subprocess in a session of its own, with SIGINT and SIGTERM
at their defaults (a shell's background job would inherit SIGINT ignored, and the command
keeps it so); the signal is sent once the command shows it is under way: CPU time spent,
its first row on disk, its lock or a study's directory in OUT, a policy's marker file.
"""

from __future__ import annotations

import os
import re
import resource
import select
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

pq = pytest.importorskip("pyarrow.parquet")

from hetsched.runner import LOCK_FILE  # noqa: E402
from hetsched.sweep import SWEEP_FILE, load_grid  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TRACE = REPO.parent / "shared" / "realdata" / "traces" / "tracecompass_android_sched_ftrace.txt"

# 8 cells of half a second or more each: the first rows arrive soon, the last seconds later
SLOW_GRID = """\
platforms: [gs101]
workloads: [phone-mix]
schedulers: [cfs, eas]
seeds: 4
duration: 200.0
"""

# a Python policy that says when the engine first calls it, then makes every wakeup slow:
# the signal arrives inside the hook, while the engine is mid-run
SLOW_POLICY = """\
import os, time
import hetsched

class Slow(hetsched.Policy):
    name = "slow"
    base = "cfs"

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        marker = os.environ["HETSCHED_TEST_READY"]
        if not os.path.exists(marker):
            open(marker, "w").close()
        time.sleep(0.02)
        return None
"""

# hooks that never end on their own: an endless iterator of migrations whose items come
# slowly (the bound on what a hook returns is some 30 s away), and a loop in Python
ENDLESS_POLICY = """\
import os, time
import hetsched

def _ready():
    marker = os.environ["HETSCHED_TEST_READY"]
    if not os.path.exists(marker):
        open(marker, "w").close()

class SlowEndless(hetsched.Policy):
    name = "slow-endless"

    def balance(self, view):
        _ready()
        while True:
            time.sleep(0.001)
            yield (0, 1)

class Spin(hetsched.Policy):
    name = "spin"

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        _ready()
        while True:
            pass
"""


def _signals_at_default() -> None:
    os.setsid()
    for s in (signal.SIGINT, signal.SIGTERM):
        signal.signal(s, signal.SIG_DFL)


class Command:
    """``hetsched ARGS`` under way in its own session; every process it starts carries
    ``HETSCHED_TEST_MARKER`` in its environment, so that none can hide."""

    def __init__(self, args, tmp_path: Path):
        import hetsched

        self.marker = f"hetsched-test-{uuid.uuid4().hex}"
        self.ready = tmp_path / f"ready-{self.marker}"
        env = dict(os.environ, COLUMNS="400", HETSCHED_TEST_MARKER=self.marker, HETSCHED_TEST_READY=str(self.ready))
        root = str(Path(hetsched.__file__).resolve().parents[1])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen([sys.executable, "-m", "hetsched.cli", *map(str, args)], env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     preexec_fn=_signals_at_default)

    def wait_for(self, what: str, cond, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while not cond():
            if self.proc.poll() is not None:
                out, err = self.proc.communicate()
                pytest.fail(f"the command ended (status {self.proc.returncode}) before {what}:\n{out}\n{err}")
            if time.monotonic() > deadline:
                self.proc.kill()
                pytest.fail(f"no {what} within {timeout} s")
            time.sleep(0.02)

    def stderr_line(self, prefix: str, timeout: float = 120) -> str:
        """The first line on the command's stderr that starts with ``prefix`` (read from the
        pipe byte by byte, so that finish() gets the rest of it unbuffered)."""
        fd, line, deadline = self.proc.stderr.fileno(), b"", time.monotonic() + timeout
        while True:
            if not select.select([fd], [], [], max(0.0, deadline - time.monotonic()))[0]:
                self.proc.kill()
                pytest.fail(f"no line starting {prefix!r} on stderr within {timeout} s")
            c = os.read(fd, 1)
            if not c:
                self.proc.wait()
                pytest.fail(f"the command ended (status {self.proc.returncode}) before a line starting {prefix!r}")
            if c != b"\n":
                line += c
                continue
            if line.decode().startswith(prefix):
                return line.decode()
            line = b""

    def cpu_s(self) -> float:
        """CPU time the command has spent."""
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            return 0.0
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def finish(self, timeout: float = 60) -> tuple[str, str]:
        try:
            return self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            pytest.fail(f"the command did not end within {timeout} s of the signal:\n{err}")

    def live_processes(self) -> list[int]:
        """Processes (not zombies) whose environment carries the marker."""
        found = []
        needle = f"HETSCHED_TEST_MARKER={self.marker}".encode()
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                state = Path(f"/proc/{d}/stat").read_text().rpartition(")")[2].split()[0]
                if state != "Z" and needle in Path(f"/proc/{d}/environ").read_bytes():
                    found.append(int(d))
            except OSError:
                continue
        return found

    def assert_none_left(self, timeout: float = 15) -> None:
        deadline = time.monotonic() + timeout
        while (left := self.live_processes()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert left == [], f"processes left behind: {left}"


def assert_interrupted(cmd: Command, out: str, err: str, sig: signal.Signals, *needles: str) -> str:
    """128 + the signal's number, and one line on stderr (no traceback) saying what stopped."""
    assert cmd.proc.returncode == 128 + sig, (cmd.proc.returncode, out, err)
    assert "Traceback" not in err, err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"hetsched: interrupted ({sig.name}): "), lines[0]
    for n in needles:
        assert n in lines[0], (n, lines[0])
    return lines[0]


pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs Linux /proc")


@pytest.fixture(scope="module")
def startup_cpu_s(tmp_path_factory) -> float:
    """CPU time ``hetsched run`` takes to import, build its simulation and write a run of a
    millisecond, on this machine: a command past it is simulating. (It is 1 s and more on
    some machines, so a fixed guess would send a signal into the imports there.)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([sys.executable, "-m", "hetsched.cli", "run", "--duration", "0.001", "--no-lower-bound",
                    "--out", tmp_path_factory.mktemp("startup") / "out"], check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@pytest.fixture
def start(tmp_path):
    """``start(ARGS)``: a Command; whatever a failed test leaves running is killed."""
    started: list[Command] = []

    def _start(args) -> Command:
        started.append(Command(args, tmp_path))
        return started[-1]

    yield _start
    for cmd in started:
        if cmd.proc.poll() is None:
            os.killpg(cmd.proc.pid, signal.SIGKILL)
            cmd.proc.communicate()


# ------------------------------------------------------------------ run, compare, replay

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_run_interrupted_says_where_and_writes_nothing(tmp_path, sig, start, startup_cpu_s):
    out = tmp_path / "out"
    cmd = start(["run", "--duration", "36000", "--out", out])
    cmd.wait_for("the run under way", lambda: cmd.cpu_s() >= startup_cpu_s + 0.5)
    cmd.proc.send_signal(sig)
    line = assert_interrupted(cmd, *cmd.finish(), sig, "run stopped at ", " of 36000 s simulated; nothing written to")
    assert float(re.search(r"stopped at ([0-9.]+) s", line).group(1)) > 0
    assert not out.exists()


def test_a_signal_inside_a_python_policy_hook_stops_the_run(tmp_path, start):
    policy = tmp_path / "slow.py"
    policy.write_text(SLOW_POLICY)
    out = tmp_path / "out"
    cmd = start(["run", "--scheduler", f"{policy}:Slow", "--duration", "60", "--out", out])
    cmd.wait_for("the policy's first call", cmd.ready.exists)
    cmd.proc.send_signal(signal.SIGINT)
    assert_interrupted(cmd, *cmd.finish(), signal.SIGINT, "run stopped at ", "nothing written to")
    assert not out.exists()


@pytest.mark.parametrize("cls,sig", [("SlowEndless", signal.SIGINT), ("SlowEndless", signal.SIGTERM),
                                     ("Spin", signal.SIGTERM)])
def test_a_signal_stops_a_hook_that_never_ends(tmp_path, start, cls, sig):
    policy = tmp_path / "endless.py"
    policy.write_text(ENDLESS_POLICY)
    out = tmp_path / "out"
    cmd = start(["run", "--scheduler", f"{policy}:{cls}", "--duration", "60", "--out", out])
    cmd.wait_for("the policy's first call", cmd.ready.exists)
    cmd.proc.send_signal(sig)
    assert_interrupted(cmd, *cmd.finish(), sig, "run stopped at ", "nothing written to")
    assert not out.exists()


def test_replay_interrupted_writes_nothing(tmp_path, start):
    if not TRACE.is_file():
        pytest.skip(f"{TRACE} is not available")
    policy = tmp_path / "slow.py"
    policy.write_text(SLOW_POLICY)
    out = tmp_path / "out"
    cmd = start(["replay", TRACE, "--platform", "juno-r0", "--scheduler", f"{policy}:Slow", "--out", out])
    cmd.wait_for("the policy's first call", cmd.ready.exists)
    cmd.proc.send_signal(signal.SIGTERM)
    assert_interrupted(cmd, *cmd.finish(), signal.SIGTERM, "replay stopped at ", "nothing written to")
    assert not out.exists()


def test_compare_interrupted_writes_nothing(tmp_path, start):
    out = tmp_path / "out"
    cmd = start(["compare", "--scheduler", "cfs", "--scheduler", "eas", "--duration", "3000", "--seeds", "2",
                 "--out", out])
    cmd.stderr_line("compare: 1/4 runs")  # one run done, the second under way
    cmd.proc.send_signal(signal.SIGINT)
    assert_interrupted(cmd, *cmd.finish(), signal.SIGINT, "compare stopped after 1 of 4 runs; nothing written to")
    assert not out.exists()


def test_temporaries_of_a_killed_run_are_removed_by_the_next(tmp_path, tools):
    out = tmp_path / "out"
    out.mkdir()
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = out / f".result.json.tmp-{int(gone.stdout)}"  # what SIGKILL leaves mid-write
    dead.write_text("{")
    live = out / f".result.json.tmp-{os.getpid()}"  # a writer still running: not ours to remove
    live.write_text("{")
    proc = tools.run_cli(["run", "--workload", "periodic", "--duration", "0.2", "--out", out])
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in out.iterdir()) == sorted(["phases.txt", "result.json", live.name])


# ------------------------------------------------------------------ sweep

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_sweep_interrupted_keeps_its_rows_and_ends_its_workers(tmp_path, sig, start):
    grid = tmp_path / "grid.yaml"
    grid.write_text(SLOW_GRID)
    total = len(load_grid(grid).cells())
    out = tmp_path / "out"
    cmd = start(["sweep", grid, "--out", out, "--workers", "2", "--flush-every", "0"])
    cmd.wait_for("the first row", (out / SWEEP_FILE).exists)
    if sig == signal.SIGINT:
        os.killpg(cmd.proc.pid, sig)  # Ctrl-C: the terminal signals the whole process group
    else:
        cmd.proc.send_signal(sig)  # `kill PID`: the driver alone
    assert_interrupted(cmd, *cmd.finish(), sig, f"(the grid has {total} cells), continue with --resume")
    n = pq.read_metadata(out / SWEEP_FILE).num_rows
    assert 1 <= n < total
    assert [p.name for p in out.iterdir()] == [SWEEP_FILE]  # no lock, no temporary
    cmd.assert_none_left()


def test_sweep_killed_outright_takes_its_workers_with_it(tmp_path, start):
    grid = tmp_path / "grid.yaml"
    grid.write_text(SLOW_GRID)
    out = tmp_path / "out"
    cmd = start(["sweep", grid, "--out", out, "--workers", "2", "--flush-every", "0"])
    cmd.wait_for("the first row", (out / SWEEP_FILE).exists)
    assert len(cmd.live_processes()) >= 3  # the driver and its two workers
    cmd.proc.kill()
    cmd.proc.wait()
    cmd.assert_none_left()


def test_one_writer_per_out(tmp_path, tools, start):
    grid = tmp_path / "grid.yaml"
    grid.write_text(SLOW_GRID)
    out = tmp_path / "out"
    first = start(["sweep", grid, "--out", out, "--workers", "1", "--flush-every", "0"])
    first.wait_for("the lock", lambda: (out / LOCK_FILE).is_file() and (out / LOCK_FILE).read_text().strip())
    procs = tools.run_cli_many({
        "sweep": ["sweep", grid, "--out", out, "--workers", "1"],
        "resumed": ["sweep", grid, "--out", out, "--workers", "1", "--resume"],
        "reproduce": ["reproduce", "fa-cfs", "--smoke", "--jobs", "1", "--out", out],
    })
    for p in procs.values():
        tools.assert_one_line_error(p, f"{out}: --out: expected a directory no other hetsched process is writing to",
                                    f"process {first.proc.pid}")
    first.wait_for("the first row", (out / SWEEP_FILE).exists)
    first.proc.send_signal(signal.SIGINT)
    assert_interrupted(first, *first.finish(), signal.SIGINT, " kept in ", "continue with --resume")
    assert [p.name for p in out.iterdir()] == [SWEEP_FILE]  # the lock went with its holder


# ------------------------------------------------------------------ reproduce

def _journaled(out: Path) -> int:
    p = out / "runs.jsonl"
    return len(p.read_text().splitlines()) if p.is_file() else 0


def test_reproduce_interrupted_leaves_no_half_study_and_resumes(tmp_path, start, tools):
    out = tmp_path / "out"
    cmd = start(["reproduce", "fa-cfs", "--smoke", "--jobs", "2", "--out", out])
    # the study's own directory in OUT, its workers started, a few runs completed
    cmd.wait_for("the study under way", lambda: out.is_dir() and any(p.name.startswith(".fa-cfs.tmp-")
                                                                       for p in out.iterdir())
                 and len(cmd.live_processes()) >= 3 and _journaled(out) >= 3)
    os.killpg(cmd.proc.pid, signal.SIGINT)
    line = assert_interrupted(cmd, *cmd.finish(), signal.SIGINT, "reproduce stopped during fa-cfs",
                              "no study files written in", "continue with --resume")
    cmd.assert_none_left()
    # what the runs completed is all that is left, and the line counts it
    assert [p.name for p in out.iterdir()] == ["runs.jsonl"]
    kept = _journaled(out)
    assert f"; {kept} completed runs kept in {out / 'runs.jsonl'}" in line
    # --resume runs only the rest, and the study's numbers and plots are those of a run that
    # was never stopped
    resumed = tools.run_cli(["reproduce", "fa-cfs", "--smoke", "--jobs", "2", "--out", out, "--resume"])
    assert resumed.returncode == 0, resumed.stderr
    assert f"(and {kept} from runs.jsonl)" in resumed.stdout
    whole = tools.run_cli(["reproduce", "fa-cfs", "--smoke", "--jobs", "2", "--out", tmp_path / "whole"])
    assert whole.returncode == 0, whole.stderr
    assert "from runs.jsonl" not in whole.stdout
    made = sorted(p.name for p in (tmp_path / "whole").iterdir())
    assert sorted(p.name for p in out.iterdir()) == made
    for name in made:
        if name.endswith((".csv", ".svg")) and not name.endswith(".runs.csv"):
            assert (out / name).read_bytes() == (tmp_path / "whole" / name).read_bytes(), name
    times = (out / "fa-cfs.runs.csv").read_text().splitlines()
    assert times[0] == "run,wall_s,resumed" and sum(t.endswith(",1") for t in times[1:]) == kept
    assert len(times) == len((tmp_path / "whole" / "fa-cfs.runs.csv").read_text().splitlines())
