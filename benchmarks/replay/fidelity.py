"""Replay fidelity: record real programs on this machine, replay them on `host`, compare.

    sudo python benchmarks/replay/fidelity.py [--repeats 3] [--json out.json] [--keep DIR]
    python benchmarks/replay/fidelity.py --replay DIR     # the kept recordings, no tracing

For each program: `hetsched record` it (tracefs, as root), read the trace, build the
replay (the program's process tree), run it on the `host` platform with the cfs scheduler,
and compare with what the trace itself shows:

* total busy time: the sum of the recorded tasks' run bursts (trace) vs the sum of their
  CPU time (simulation);
* makespan: first start to last run end of the recorded tasks (trace) vs first start to
  the last "end" mark of those tasks (simulation).

Each recording is replayed twice: "tree" replays only the command's process tree (the
machine otherwise empty); "all" also replays every other task of the trace, kernel
threads included (the background load the command competed with), and still measures
the command's tree.

Targets (the issue): busy time within 5 %, makespan within 15 %.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

from hetsched.sim import Simulation
from hetsched.traces.parse import load_trace
from hetsched.traces.record import record
from hetsched.traces.replay import ReplayOptions, build_replay, compare

PROGRAMS = {
    "messaging -g 1 -l 100": ["perf", "bench", "sched", "messaging", "-g", "1", "-l", "100"],
    "messaging -g 2 -l 50 -p": ["perf", "bench", "sched", "messaging", "-g", "2", "-l", "50", "-p"],
    "messaging -g 1 -l 200 -t": ["perf", "bench", "sched", "messaging", "-g", "1", "-l", "200", "-t"],
    "messaging (defaults: 10 groups)": ["perf", "bench", "sched", "messaging"],
    "pipe -l 20000": ["perf", "bench", "sched", "pipe", "-l", "20000"],
    # SCHED_FIFO: immune to the machine's other (CFS) load, replayed as FIFO
    "chrt -f 10 messaging -g 1 -l 100": ["chrt", "-f", "10", "perf", "bench", "sched", "messaging",
                                         "-g", "1", "-l", "100"],
    "chrt -f 10 pipe -l 20000": ["chrt", "-f", "10", "perf", "bench", "sched", "pipe", "-l", "20000"],
}


def switch_cost_ns() -> int:
    """The context switch the engine charges on host: the one host measured
    (platforms/host.py), else the engine's default (replay.switch_work)."""
    from hetsched.platforms import load_platform
    from hetsched.traces.replay import switch_work
    return switch_work(load_platform("host"))[0]


def trace_path(workdir: Path, name: str, i: int) -> Path:
    slug = "".join(ch if ch.isalnum() else "_" for ch in name).strip("_")
    return workdir / f"{slug}-{i}.trace"


def one(name: str, cmd: list[str], scheduler: str, governor: str, workdir: Path, i: int,
        deduct: bool = False, replay_only: bool = False) -> list[dict]:
    path = trace_path(workdir, name, i)
    if replay_only:
        header = {"lost_events": 0}  # a kept recording: its losses were reported when made
    else:
        with open(os.devnull, "w") as null:
            saved = os.dup(1)
            os.dup2(null.fileno(), 1)        # keep the benchmark's own output off the table
            try:
                header = record(cmd, path, buffer_kb=262144)
            finally:
                os.dup2(saved, 1)
                os.close(saved)
    tr = load_trace(path)
    out = []
    # the bursts hold the switch into them, which the engine charges on host itself
    # (cost.context_switch_ns): take it off each burst that follows a wakeup (--keep-switch: don't)
    cost = switch_cost_ns() if deduct else 0
    for mode, opts in (("tree", ReplayOptions(tasks="tree", switch_cost_ns=cost)),
                       ("all", ReplayOptions(tasks="all", include_kthreads=True, switch_cost_ns=cost))):
        rep = build_replay(tr, opts)
        sim = Simulation(platform="host", workload=rep.spec, scheduler=scheduler, governor=governor)
        doc = sim.run().doc
        c = compare(rep, doc)
        c.update(program=name, replay=mode, tasks=len(rep.tasks), events=tr.used, lost=header["lost_events"],
                 inferred=rep.stats.get("switch-ins inferred (not in the trace)", 0),
                 semaphores=rep.stats.get("semaphores", 0), trace_file=str(path))
        out.append(c)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--scheduler", default="cfs")
    ap.add_argument("--governor", default="schedutil")
    ap.add_argument("--program", action="append", help="only these PROGRAMS keys (prefix match)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep-switch", action="store_true",
                    help="leave host's measured context switch in each recorded burst; by default it is taken off "
                         "each run burst that follows a wakeup, since the engine charges the switch itself "
                         "(cost.context_switch_ns)")
    ap.add_argument("--keep", type=Path, help="keep the traces in this directory")
    ap.add_argument("--replay", type=Path,
                    help="replay the traces an earlier --keep left in this directory instead of recording "
                         "(two builds then replay the same recordings)")
    a = ap.parse_args()
    if a.replay is None and os.geteuid() != 0:
        sys.exit("fidelity.py records through tracefs: run it as root")
    progs = {k: v for k, v in PROGRAMS.items() if not a.program or any(k.startswith(p) for p in a.program)}
    if a.replay is not None:
        progs = {k: v for k, v in progs.items() if trace_path(a.replay, k, 0).exists()}
        if not progs:
            sys.exit(f"{a.replay}: no kept recording (NAME-0.trace) of any program here")
        a.repeats = min(sum(1 for _ in a.replay.glob(trace_path(a.replay, k, 0).name[:-8] + "-*.trace"))
                        for k in progs)
    rows = []
    with tempfile.TemporaryDirectory(prefix="hetsched-fidelity-") as tmp:
        wd = a.replay or a.keep or Path(tmp)
        wd.mkdir(parents=True, exist_ok=True)
        for name, cmd in progs.items():
            for i in range(a.repeats):
                rows.extend(one(name, cmd, a.scheduler, a.governor, wd, i, not a.keep_switch, a.replay is not None))
    print(f"host replay, {a.scheduler}/{a.governor}; error = (sim - trace) / trace")
    hdr = f"{'program':34} {'replay':>6} {'run':>3} {'tasks':>5} {'events':>7} {'busy trace s':>12} {'busy sim s':>11} " \
          f"{'busy err':>8} {'mksp trace s':>12} {'mksp sim s':>11} {'mksp err':>8} {'inferred':>8} {'lost':>5}"
    print(hdr)
    for i, r in enumerate(rows):
        print(f"{r['program']:34} {r['replay']:>6} {(i // 2) % a.repeats:>3} {r['tasks']:>5} {r['events']:>7} {r['trace_busy_s']:>12.6f} "
              f"{r['sim_busy_s']:>11.6f} {r['busy_error'] * 100:>+7.2f}% {r['trace_makespan_s']:>12.6f} "
              f"{r['sim_makespan_s'] if r['sim_makespan_s'] is not None else float('nan'):>11.6f} "
              f"{(r['makespan_error'] or 0) * 100:>+7.2f}% {r['inferred']:>8} {r['lost']:>5}")
    print()
    for name, mode in [(n, m) for n in progs for m in ("tree", "all")]:
        rs = [r for r in rows if r["program"] == name and r["replay"] == mode]
        be = [abs(r["busy_error"]) * 100 for r in rs]
        me = [abs(r["makespan_error"]) * 100 for r in rs if r["makespan_error"] is not None]
        print(f"{name:34} {mode:>4} |busy err| median {statistics.median(be):.2f}% max {max(be):.2f}%   "
              f"|makespan err| median {statistics.median(me):.2f}% max {max(me):.2f}%")
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
