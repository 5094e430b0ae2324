"""What a Python hook costs: the same simulation with and without a Python
select_task_rq, and the ratio of their engine wall times.

    python docs/examples/python_policy_cost.py [WORKLOAD] [SECONDS]     # phone-mix, 60

The Python hook returns None, so every wakeup is still placed by the base and the two
runs simulate exactly the same schedule (the script checks it): the difference is the
crossing alone (taking the GIL, a view, the call). The example policy's own run
(python_policy.py, which does some work per call) is timed too. Wall times are the best
of 5 interleaved runs after a warm-up (``wall_s``: the engine's time, not the result's
post-processing).
"""

from __future__ import annotations

import sys
from pathlib import Path

import hetsched

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_policy import SmallestIdleFit  # noqa: E402

PLATFORM = "gs101"
REPEATS = 5


class Crossing(hetsched.Policy):
    """Crosses into Python on every fair wakeup and leaves each to the base."""

    name = "crossing"
    base = "cfs"

    def __init__(self) -> None:
        self.calls = 0

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        self.calls += 1
        return None


def run(scheduler, workload: str, seconds: float) -> dict:
    return hetsched.Simulation(platform=PLATFORM, workload=workload, scheduler=scheduler, seed=1,
                               lower_bound=False).run(seconds).doc


def schedule(doc: dict) -> dict:
    """A result without what differs between two runs of the same schedule."""
    return {k: v for k, v in doc.items() if k not in ("wall_s", "scheduler", "policy")}


def main() -> None:
    workload = sys.argv[1] if len(sys.argv) > 1 else "phone-mix"
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 60.0
    factories = {"cfs": lambda: "cfs", "crossing": Crossing, "example": SmallestIdleFit}
    for make in factories.values():  # warm up: imports, allocator, caches
        run(make(), workload, min(seconds, 1.0))
    best: dict[str, float] = {}
    docs: dict[str, dict] = {}
    calls = 0
    # the three interleaved, so that a slow moment of the machine hits each alike
    for _ in range(REPEATS):
        for key, make in factories.items():
            sched = make()
            d = run(sched, workload, seconds)
            best[key] = min(best.get(key, float("inf")), d["wall_s"])
            docs[key] = d
            if key == "crossing":
                calls = sched.calls
    same = schedule(docs["cfs"]) == schedule(docs["crossing"])
    base_s, cross_s, ex_s = best["cfs"], best["crossing"], best["example"]
    print(f"{PLATFORM}, {workload}, {seconds:g} s simulated, {docs['cfs']['events']} events, "
          f"{calls} Python select_task_rq calls; best of {REPEATS}")
    print(f"cfs                         {base_s * 1e3:9.1f} ms")
    print(f"cfs + Python returning None {cross_s * 1e3:9.1f} ms  x{cross_s / base_s:.2f}  "
          f"({(cross_s - base_s) / calls * 1e6:.2f} us a call; same schedule: {same})")
    print(f"smallest-idle-fit (cfs)     {ex_s * 1e3:9.1f} ms  x{ex_s / base_s:.2f}")


if __name__ == "__main__":
    main()
