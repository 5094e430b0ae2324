"""hackbench on gs101: EAS at the default sched_migration_cost (500000 ns), EAS at 10000 ns
(paper 000 Table 5's second column) and Learning EAS with only the migration-cost agent.

    PYTHONPATH=python python benchmarks/learning/hackbench.py --workload hackbench:loops=10000
"""

from __future__ import annotations

import argparse
import json
import time


def main(argv=None):
    from hetsched import Simulation

    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="hackbench:loops=10000")
    ap.add_argument("--set", action="append", default=[], help="learning.KEY=VALUE")
    ap.add_argument("--json-out", default=None)
    a = ap.parse_args(argv)
    extra = dict(kv.split("=", 1) for kv in a.set)
    cells = [("eas", {}), ("eas", {"sched_migration_cost_ns": 10000}),
             ("learning-eas", {"learning.target_load": "off", "learning.keep_record": "1", **extra})]
    rows = []
    for sched, knobs in cells:
        t = time.time()
        sim = Simulation(platform="gs101", workload=a.workload, scheduler=sched, knobs=knobs)
        r = sim.run()
        row = {"scheduler": sched, "knobs": knobs, "completion_s": r.metrics["hackbench"]["completion_s"],
               "energy_j": r.energy_j, "wall_s": time.time() - t,
               "migration_cost_ns": [x["value"] for x in sim.learning.record] if sim.learning else None}
        rows.append(row)
        print(json.dumps(row), flush=True)
    if a.json_out:
        open(a.json_out, "w").write(json.dumps(rows, indent=1) + "\n")
    return rows


if __name__ == "__main__":
    main()
