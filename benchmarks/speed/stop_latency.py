"""How long a hetsched command takes to stop after Ctrl-C.

    python benchmarks/speed/stop_latency.py [--cpu 4] [--repeat 3] -- reproduce hmc-balance --jobs 1

Starts ``hetsched ARGS`` in a session of its own (``--out`` is added, in a fresh temporary
directory, unless ARGS has one), waits until it has spent ``--cpu`` seconds of CPU (so that
it is mid-run), sends SIGINT to its process group, and prints the wall time until it
exited, its status and its one line. Nothing is asserted: the machine's speed varies.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time


def cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def once(args: list[str], wait_cpu_s: float) -> tuple[float, int, str]:
    out = None
    if "--out" not in args:
        out = tempfile.mkdtemp(prefix="hetsched-stop-")
        args = [*args, "--out", os.path.join(out, "out")]
    try:
        p = subprocess.Popen([sys.executable, "-m", "hetsched.cli", *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, start_new_session=True)
        while cpu_s(p.pid) < wait_cpu_s:
            if p.poll() is not None:
                raise SystemExit(f"the command ended before {wait_cpu_s} CPU-s: {p.stderr.read().strip()}")
            time.sleep(0.01)
        t = time.perf_counter()
        os.killpg(p.pid, signal.SIGINT)
        _, err = p.communicate()
        return time.perf_counter() - t, p.returncode, err.strip()
    finally:
        if out:
            shutil.rmtree(out, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpu", type=float, default=4.0, help="CPU seconds the command spends before SIGINT")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("args", nargs=argparse.REMAINDER, help="the hetsched command, after --")
    a = ap.parse_args()
    args = a.args[1:] if a.args[:1] == ["--"] else a.args
    if not args:
        ap.error("no command: give it after --")
    for i in range(a.repeat):
        # a little later each time, so that the signal meets the runs at different points
        wall, status, line = once(args, a.cpu + i)
        print(f"stopped {wall:.3f} s after SIGINT, status {status}: {line[:160]}")


if __name__ == "__main__":
    main()
