"""Record a scheduler trace of a command on this Linux machine through tracefs.

``record(["perf", "bench", "sched", "messaging"], Path("run.trace"))``:

1. finds tracefs in /proc/mounts, or mounts it on /sys/kernel/tracing (and unmounts it
   at the end);
2. uses a private ring buffer, a tracefs *instance* (``instances/hetsched-<pid>``), so the
   global tracing state (``tracing_on``, ``current_tracer``, ``buffer_size_kb``, the events
   enabled at the top level, ``set_event_pid``, options) is never touched; where instances
   are not available it uses the top level and saves and restores each of those files
   that it changes;
3. enables sched_switch, sched_waking, sched_wakeup, sched_wakeup_new,
   sched_process_fork/exit/exec and power/cpu_frequency (those the kernel has), runs the
   command, stops tracing, reads the buffer, checks the per-CPU overrun counters;
4. restores everything in a ``finally`` (SIGINT and SIGTERM are turned into an exception so
   that it runs; the command gets SIGTERM, then SIGKILL after 5 s);
5. writes raw ftrace text with a first line ``# hetsched-record: {json}`` (root pid,
   command, exit status, CPUs, lost events) under a temporary name and renames it: an
   interrupted or failed recording leaves no output file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Optional, Sequence

from hetsched.errors import HetschedError, InputError

__all__ = ["record", "find_tracefs", "EVENTS", "RecordError"]

EVENTS = ("sched/sched_switch", "sched/sched_waking", "sched/sched_wakeup", "sched/sched_wakeup_new",
          "sched/sched_process_fork", "sched/sched_process_exit", "sched/sched_process_exec",
          "power/cpu_frequency", "binder/binder_transaction")
DEFAULT_MOUNT = Path("/sys/kernel/tracing")


class RecordError(HetschedError):
    """Tracing could not be set up on this machine."""


def find_tracefs() -> Optional[Path]:
    try:
        for line in Path("/proc/mounts").read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[2] == "tracefs":
                return Path(parts[1].replace("\\040", " "))
    except OSError:
        pass
    return None


def _w(p: Path, value: str) -> None:
    with open(p, "w") as f:
        f.write(value)


def _r(p: Path) -> str:
    return p.read_text().strip()


class _Session:
    """The tracefs state this recording changed, and how to put it back."""

    def __init__(self, buffer_kb: int, use_instance: bool = True):
        self.mounted = False
        self.instance: Optional[Path] = None
        self.saved: list[tuple[Path, str]] = []   # (file, previous content), restored in reverse
        self.root = self._mount()
        self.dir = self._dir(use_instance)
        self.enabled: list[str] = []
        self.buffer_kb = buffer_kb

    def _mount(self) -> Path:
        root = find_tracefs()
        if root is not None:
            return root
        r = subprocess.run(["mount", "-t", "tracefs", "nodev", str(DEFAULT_MOUNT)], capture_output=True, text=True)
        if r.returncode != 0:
            raise RecordError(f"hetsched record: tracefs is not mounted and mounting it on {DEFAULT_MOUNT} "
                              f"failed ({r.stderr.strip() or 'mount exited ' + str(r.returncode)}); "
                              "run as root on a kernel with CONFIG_FTRACE")
        self.mounted = True
        return DEFAULT_MOUNT

    def _dir(self, use_instance: bool) -> Path:
        if use_instance and (self.root / "instances").is_dir():
            inst = self.root / "instances" / f"hetsched-{os.getpid()}"
            try:
                inst.mkdir()
                self.instance = inst
                return inst
            except OSError:
                pass
        return self.root

    def set(self, name: str, value: str) -> None:
        p = self.dir / name
        if self.instance is None:
            prev = _r(p)
            # buffer_size_kb reads "7 (expanded: 1408)" before first use: restore the size
            if name == "buffer_size_kb" and "expanded:" in prev:
                prev = prev.split("expanded:")[1].strip(" )")
            if name == "current_tracer" and prev == value:
                return
            self.saved.append((p, prev))
        _w(p, value)

    def start(self) -> None:
        if not os.access(self.dir / "tracing_on", os.W_OK):
            raise RecordError(f"hetsched record: {self.dir} is not writable; run as root")
        self.set("tracing_on", "0")
        if self.instance is None:
            self.set("current_tracer", "nop")
        self.set("buffer_size_kb", str(self.buffer_kb))
        _w(self.dir / "trace", "")  # clear this buffer
        for ev in EVENTS:
            f = self.dir / "events" / ev / "enable"
            if f.exists():
                self.set(f"events/{ev}/enable", "1")
                self.enabled.append(ev)
        if "sched/sched_switch" not in self.enabled:
            raise RecordError(f"hetsched record: {self.dir}/events/sched/sched_switch does not exist "
                              "(kernel without scheduler tracepoints?)")
        self.set("tracing_on", "1")

    def stop(self) -> None:
        _w(self.dir / "tracing_on", "0")

    def overruns(self) -> int:
        total = 0
        for stats in sorted((self.dir / "per_cpu").glob("cpu*/stats")):
            for line in stats.read_text().splitlines():
                if line.startswith("overrun:"):
                    total += int(line.split()[1])
        return total

    def restore(self) -> list[str]:
        """Put back everything; returns the problems (restoring goes on past each)."""
        problems = []
        try:
            _w(self.dir / "tracing_on", "0")
        except OSError as e:
            problems.append(f"tracing_on: {e}")
        if self.instance is not None:
            for ev in self.enabled:
                try:
                    _w(self.instance / "events" / ev / "enable", "0")
                except OSError:
                    pass
            for _ in range(50):
                try:
                    self.instance.rmdir()
                    break
                except OSError as e:  # EBUSY while a reader still holds it
                    err = e
                    time.sleep(0.1)
            else:
                problems.append(f"rmdir {self.instance}: {err}")
        for p, prev in reversed(self.saved):
            try:
                _w(p, prev)
            except OSError as e:
                problems.append(f"{p}: {e}")
        if self.mounted:
            r = subprocess.run(["umount", str(self.root)], capture_output=True, text=True)
            if r.returncode != 0:
                problems.append(f"umount {self.root}: {r.stderr.strip()}")
        return problems


class _Signalled(KeyboardInterrupt):
    pass


def record(command: Sequence[str], out: Path, buffer_kb: int = 65536, use_instance: bool = True,
           log=None) -> dict:
    """Run ``command`` under tracing and write the trace to ``out``; returns the header dict."""
    if not command:
        raise InputError("hetsched record", "COMMAND", "a command to run after --")
    if buffer_kb < 64:
        raise InputError("--buffer-kb", "buffer-kb", "at least 64 (KiB per CPU)", got=buffer_kb)
    out = Path(out)
    if out.is_dir():
        raise InputError(str(out), "--out", "a file name (it is a directory)")
    from hetsched.outputs import OutputSet

    # what an earlier record of this file left when it was killed (SIGKILL) before renaming
    # is removed; nothing else in a directory of the user's
    outs = OutputSet(out.parent, clean=out.name)

    def on_signal(signum, frame):
        raise _Signalled(signal.Signals(signum).name)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    session: Optional[_Session] = None
    child: Optional[subprocess.Popen] = None
    ok = False
    try:
        session = _Session(buffer_kb, use_instance)
        session.start()
        t0 = time.monotonic()
        try:
            child = subprocess.Popen(list(command))
        except OSError as e:
            raise InputError("hetsched record", "COMMAND", "an executable command",
                             f"{command[0]}: {e.strerror or e}") from None
        status = child.wait()
        wall = time.monotonic() - t0
        session.stop()
        lost = session.overruns()
        text = (session.dir / "trace").read_text(errors="replace")
        header = {"root_pid": child.pid, "command": list(command), "exit_status": status,
                  "wall_s": round(wall, 6), "cpus": os.cpu_count(), "lost_events": lost,
                  "events": list(session.enabled), "platform": "host",
                  "tracefs": str(session.dir), "instance": session.instance is not None}
        with outs:  # all or nothing (hetsched.outputs): a full disk leaves no temporary
            f = outs.stream(out.name)
            f.write("# hetsched-record: " + json.dumps(header) + "\n")
            f.write(text)
            outs.commit()
        ok = True
        return header
    finally:
        try:
            if child is not None and child.poll() is None:
                child.terminate()
                try:
                    child.wait(5)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
        finally:
            problems = session.restore() if session is not None else []
            for s, h in old.items():
                signal.signal(s, h)
            if not ok:
                outs.abort()
            if problems and log is not None:
                log(f"hetsched record: could not restore tracefs fully: {'; '.join(problems)}")
