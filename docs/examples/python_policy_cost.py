"""What a Python hook costs: the same simulation with and without a Python
select_task_rq, and the ratio of their engine wall times.

    python docs/examples/python_policy_cost.py [WORKLOAD] [SECONDS]

The Python hook returns None, so every wakeup is still placed by the base and the two
runs simulate exactly the same schedule (the script checks it): the difference is the
crossing alone (taking the GIL, a view, the call). The example policy's own run
(python_policy.py, which does some work per call) is timed too. Wall times are the best
of 3 runs (``wall_s``: the engine's time, not the result's post-processing).
"""

from __future__ import annotations

import sys
from pathlib import Path

import hetsched

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_policy import SmallestIdleFit  # noqa: E402

PLATFORM = "gs101"
REPEATS = 3


class Crossing(hetsched.Policy):
    """Crosses into Python on every fair wakeup and leaves each to the base."""

    name = "crossing"
    base = "cfs"

    def __init__(self) -> None:
        self.calls = 0

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        self.calls += 1
        return None


def best_of(scheduler_factory, workload: str, seconds: float) -> tuple[float, dict, object]:
    best, doc, policy = None, None, None
    for _ in range(REPEATS):
        sched = scheduler_factory()
        d = hetsched.Simulation(platform=PLATFORM, workload=workload, scheduler=sched, seed=1,
                                lower_bound=False).run(seconds).doc
        if best is None or d["wall_s"] < best:
            best, doc, policy = d["wall_s"], d, sched
    return best, doc, policy


def main() -> None:
    workload = sys.argv[1] if len(sys.argv) > 1 else "phone-mix"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    base_s, base_doc, _ = best_of(lambda: "cfs", workload, seconds)
    cross_s, cross_doc, cross = best_of(Crossing, workload, seconds)
    same = {k: v for k, v in base_doc.items() if k not in ("wall_s", "scheduler", "policy")} == \
           {k: v for k, v in cross_doc.items() if k not in ("wall_s", "scheduler", "policy")}
    ex_s, _, _ = best_of(SmallestIdleFit, workload, seconds)
    n = cross.calls
    print(f"{PLATFORM}, {workload}, {seconds:g} s simulated, {base_doc['events']} events, "
          f"{n} Python select_task_rq calls, best of {REPEATS}")
    print(f"cfs                         {base_s * 1e3:9.1f} ms")
    print(f"cfs + Python returning None {cross_s * 1e3:9.1f} ms  x{cross_s / base_s:.2f}  "
          f"({(cross_s - base_s) / n * 1e6:.2f} us a call; same schedule: {same})")
    print(f"smallest-idle-fit (cfs)     {ex_s * 1e3:9.1f} ms  x{ex_s / base_s:.2f}")


if __name__ == "__main__":
    main()
