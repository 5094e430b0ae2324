"""Runs one task set through SimSo and prints its wall times: vs_simso.py's helper.

It runs under the interpreter of a separate virtualenv that has SimSo (PyPI ``simso``,
which pins SimPy 2.3.1), so neither is ever installed beside hetsched; it imports nothing
of hetsched. Input on stdin, one JSON object:

    {"cpus": 4, "tasks": [{"period_ns": ..., "run_ns": ...}, ...], "duration_s": 10,
     "scheduler": "simso.schedulers.EDF", "repeat": 3}

Output on stdout, one JSON line: the wall time of each ``Model.run_model()`` (the
simulation, with the Results analysis SimSo always runs at its end; building the Model is
not timed, as hetsched's Simulation() is not), the jobs released and the deadline misses.
"""

from __future__ import annotations

import json
import os
import sys
import time


def build(cfg: dict):
    from simso.configuration import Configuration
    from simso.core import Model

    c = Configuration()
    # SimSo's internal unit is the cycle; 1e6 cycles per ms makes one cycle one ns
    c.cycles_per_ms = 1_000_000
    c.duration = round(cfg["duration_s"] * 1000 * c.cycles_per_ms)
    c.etm = "wcet"  # every job runs exactly its WCET, as hetsched's run amount at f_max
    for i, t in enumerate(cfg["tasks"]):
        period_ms, wcet_ms = t["period_ns"] / 1e6, t["run_ns"] / 1e6
        c.add_task(name=f"T{i}", identifier=i + 1, period=period_ms, activation_date=0,
                   wcet=wcet_ms, deadline=period_ms)
    for j in range(cfg["cpus"]):
        c.add_processor(name=f"CPU{j}", identifier=j + 1)
    c.scheduler_info.clas = cfg["scheduler"]
    c.check_all()
    return Model(c)


def main() -> None:
    cfg = json.load(sys.stdin)
    out = sys.stdout
    walls, jobs, missed = [], 0, 0
    # simso.schedulers.EDF (and a few others) print one line per scheduling decision;
    # that goes to /dev/null, as anyone timing it would do
    devnull = open(os.devnull, "w")
    for _ in range(cfg["repeat"]):
        model = build(cfg)
        sys.stdout = devnull
        try:
            t0 = time.perf_counter()
            model.run_model()
            walls.append(time.perf_counter() - t0)
        finally:
            sys.stdout = out
        jobs = sum(len(t.jobs) for t in model.task_list)
        # a job that ended after its deadline, or that SimSo aborted at its deadline
        # (abort_on_miss, the default); jobs still running at the end are not counted
        missed = sum(1 for t in model.task_list for j in t.jobs
                     if j.end_date is not None and j.exceeded_deadline)
    import simso
    print(json.dumps({"walls": walls, "jobs": jobs, "missed": missed,
                      "simso": getattr(simso, "__version__", None),
                      "python": sys.version.split()[0]}))


if __name__ == "__main__":
    main()
