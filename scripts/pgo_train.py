#!/usr/bin/env python3
"""The training runs of a profile-guided build (scripts/build-pgo.sh).

An instrumented engine counts how often each branch is taken and each function called; the
optimised build then lays its code out, inlines and orders its branches for those counts.
The counts should therefore come from what users wait for, in proportion:

* hackbench on sm8150 under eas with the msm-4.14 kernel, the pieces of work that dominate
  `hetsched reproduce` at both levels (Learning EAS's Tables 5 and 7);
* the engine's reference configuration (engine_speed.py: 20 periodic tasks on gs101,
  schedutil) under cfs and eas, what `hetsched run` and the speed targets are set for;
* the schedulers of `hetsched compare`'s default on phone-mix, as it and the sweeps run them;
* every study at its smoke level, one seed: their platforms, kernels (WALT, core_ctl,
  schedtune), governors, workloads and the balanced core assignment study's tick-bound runs.

The runs' results are thrown away; only the counts they leave in LLVM_PROFILE_FILE's
directory matter. About 20 s with the instrumented engine.

    python scripts/pgo_train.py
"""

from __future__ import annotations

import sys
import tempfile
import time


def main() -> int:
    from hetsched import Simulation
    from hetsched.reproduce import STUDIES, reproduce
    from hetsched.sim import SCHEDULERS, SWITCHER_SCHEDULERS

    t0 = time.perf_counter()
    Simulation(platform="sm8150", workload="hackbench:groups=1,loops=10000", scheduler="eas",
               knobs={"kernel": "msm-4.14"}, seed=1, lower_bound=False).run(1.0)
    for scheduler in ("cfs", "eas"):
        Simulation(platform="gs101", workload="periodic:n=20,util=0.5,pmin_ms=5,pmax_ms=50",
                   scheduler=scheduler, governor="schedutil", seed=1).run(20.0)
    for scheduler in SCHEDULERS:
        if scheduler not in SWITCHER_SCHEDULERS:  # the switcher's run in util-aware-lb's smoke level below
            Simulation(platform="gs101", workload="phone-mix", scheduler=scheduler, seed=1).run(2.0)
    with tempfile.TemporaryDirectory(prefix="hetsched-pgo-") as out:
        reproduce(list(STUDIES), out_dir=out, level="smoke", seeds=1, jobs=1)
    print(f"pgo_train: {time.perf_counter() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
