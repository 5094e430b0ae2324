#!/usr/bin/env python3
"""What a user waits for: whole `hetsched` processes, from the shell's fork to exit.

Each command runs --repeat times, taking turns, and the best wall time is kept (the
machine is shared; the least disturbed run is the minimum). Beside them, in the same
turns: the interpreter alone (`python -c pass`) and the interpreter importing numpy, the
floor any `hetsched` process pays before it does anything.

* run: the reference configuration (20 periodic tasks, gs101, schedutil, 60 simulated s)
  with its lower bound, writing result.json; its real-time factor as a user sees it is
  60 s over this wall time;
* compare: the default `hetsched compare` (seven policies, phone-mix, 10 s, 3 seeds);
* help: `hetsched --help`.

    python benchmarks/speed/whole_process.py [--repeat 5]

The time of `hetsched run`'s parts (imports, simulation with the bound, writing) is
printed from one extra run with ``python -X importtime`` and the result's own ``wall_s``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

# cfs named: the reference configuration docs/speed.md measures (`run`'s default on gs101 is eas)
REF = ["--platform", "gs101", "--workload", "periodic:n=20,util=0.5,pmin_ms=5,pmax_ms=50",
       "--scheduler", "cfs", "--governor", "schedutil", "--duration", "60"]


def hetsched(*args: str) -> list[str]:
    return [sys.executable, "-m", "hetsched.cli", *args]


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    out = tempfile.mkdtemp(prefix="hetsched-wp-")
    try:
        cmds = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
            "hetsched --help": hetsched("--help"),
            "hetsched run (reference, 60 s)": hetsched("run", *REF, "--out", os.path.join(out, "run")),
            "hetsched compare (default)": hetsched("compare"),
        }
        best: dict[str, float] = {}
        for _ in range(a.repeat):
            for name, cmd in cmds.items():
                w = timed(cmd)
                best[name] = min(best.get(name, w), w)
        print(f"whole processes, best of {a.repeat}, taking turns")
        for name, w in best.items():
            extra = f"  ({60 / w:.0f}x real time as a user sees it)" if name.startswith("hetsched run") else ""
            print(f"  {name:34s} {w:6.3f} s{extra}")
        # one run's parts
        env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")
        p = subprocess.run(hetsched("run", *REF, "--out", os.path.join(out, "parts")), env=env,
                           capture_output=True, text=True, check=True)
        top = {}
        for line in p.stderr.splitlines():
            m = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S+)$", line)
            if m and m.group(2) in ("hetsched.cli", "hetsched.sim", "numpy", "typer", "rich.console"):
                top[m.group(2)] = int(m.group(1)) / 1e6
        doc = json.load(open(os.path.join(out, "parts", "result.json")))
        print("  one run's parts: imports (cumulative) " + ", ".join(f"{k} {v:.3f} s" for k, v in top.items())
              + f"; simulation with the bound (result's wall_s) {doc['wall_s']:.3f} s")
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
