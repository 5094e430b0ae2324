"""How much memory and time reading a trace takes: for each trace file, in a fresh
interpreter with hetsched (and numpy) already imported, the file's size, the peak RSS
growth over that interpreter while the trace is read (``load_trace``) and then turned
into a replay (``build_replay``) or measured (``phone_figures``), and the wall time of
each step (docs/traces.md, "Large traces").

    python benchmarks/speed/trace_memory.py /tmp/realsys/*.html \\
        ../shared/realdata/traces/pixel6a_tensor_warm_startup.perfetto-trace --before HEAD~1

``--before REV`` runs the same measurement, in the same run, on a copy of the package
whose trace reader (``READER``) is the one of git revision REV (the rest of the package,
the compiled engine included, is this tree's), and prints both side by side. Peak RSS is the
kernel's high-water mark (VmHWM), reset after the imports by writing 5 to
/proc/self/clear_refs (Linux 4.0 and later), so it is the peak of the step itself.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "python" / "hetsched"

CHILD = r"""
import json, sys, time
import numpy, hetsched, hetsched.traces, hetsched.traces.parse, hetsched.traces.replay, hetsched.traces.figures
from hetsched.traces.parse import load_trace
from hetsched.traces.replay import build_replay
from hetsched.traces.figures import phone_figures
try:
    import perfetto.protos.perfetto.trace.perfetto_trace_pb2  # imported by the CLI's first Perfetto read
except ImportError:
    pass

def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(key)

path, step = sys.argv[1], sys.argv[2]
import gc; gc.collect()
with open("/proc/self/clear_refs", "w") as f:
    f.write("5")
base = status("VmRSS")
t0 = time.perf_counter()
tr = load_trace(path)
t1 = time.perf_counter()
out = {"parse_s": t1 - t0, "events": len(tr.events), "parse_peak": status("VmHWM") - base}
if step == "replay":
    build_replay(tr)
elif step == "stats":
    phone_figures(tr)
out["step_s"] = time.perf_counter() - t1
out["peak"] = status("VmHWM") - base
print(json.dumps(out))
"""


#: the reader's files; the rest of traces/ (figures.py) is this tree's on both sides
READER = ("__init__.py", "parse.py", "perfetto.py", "replay.py", "events.py", "store.py")


def package_at(rev: str, into: Path) -> Path:
    """A copy of the package whose trace reader (READER) is as at git revision ``rev``."""
    dst = into / "hetsched"
    shutil.copytree(PKG, dst, ignore=shutil.ignore_patterns("__pycache__"))
    for name in READER:
        got = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:python/hetsched/traces/{name}"],
                             capture_output=True)
        if got.returncode == 0:
            (dst / "traces" / name).write_bytes(got.stdout)
        else:
            (dst / "traces" / name).unlink(missing_ok=True)
    return into


def measure(path: str, step: str, pythonpath: str | None) -> dict:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, "-c", CHILD, path, step], capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"{path}: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'failed'}")
    return json.loads(proc.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--step", choices=("parse", "replay", "stats"), default="replay",
                    help="after load_trace: build_replay (default), phone_figures, or nothing")
    ap.add_argument("--before", metavar="REV", help="also measure traces/ as at this git revision")
    ap.add_argument("--repeats", type=int, default=1, help="runs per file and tree; the fastest is shown")
    ap.add_argument("--json", metavar="FILE", help="write every measurement here")
    a = ap.parse_args()
    trees: list[tuple[str, str | None]] = []
    tmp = None
    if a.before:
        tmp = tempfile.mkdtemp(prefix="hetsched-before-")
        trees.append((f"before ({a.before})", str(package_at(a.before, Path(tmp)))))
    trees.append(("now", None))
    rows = []
    try:
        print(f"{'file':42} {'MB':>6} {'tree':>16} {'events':>9} {'parse s':>8} {f'{a.step} s':>9} "
              f"{'peak MB':>8} {'x size':>7}")
        for path in a.traces:
            size = os.path.getsize(path)
            for label, pp in trees:
                runs = [measure(path, a.step, pp) for _ in range(a.repeats)]
                r = min(runs, key=lambda r: r["parse_s"])
                r["peak"] = min(x["peak"] for x in runs)
                r.update(file=path, size=size, tree=label, step=a.step)
                rows.append(r)
                print(f"{Path(path).name[:42]:42} {size / 1e6:6.1f} {label[:16]:>16} {r['events']:9d} "
                      f"{r['parse_s']:8.2f} {r['step_s']:9.2f} {r['peak'] / 1e6:8.1f} {r['peak'] / size:7.2f}",
                      flush=True)
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
