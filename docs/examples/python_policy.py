"""A scheduler policy written in Python: place a waking task on the idle CPU of the least
capacity that fits it with 20% headroom, else leave it to the base (cfs).

    python docs/examples/python_policy.py            # prints the table in python_policy.out
    hetsched run --scheduler docs/examples/python_policy.py:SmallestIdleFit --workload video

It runs the built-in video playback workload on gs101 for 5 simulated seconds under cfs,
eas and this policy, and prints each one's energy beside the video's frames and late
frames. docs/python-policies.md explains the hooks and the view.
"""

from __future__ import annotations

import hetsched

PLATFORM = "gs101"
WORKLOAD = "video:seconds=5"
DURATION_S = 5.0
SEED = 1
# a task fits a CPU when its util, with this headroom, is below the CPU's capacity (the
# kernel's fits_capacity() keeps 25%; 20% here)
HEADROOM = 1.2


class SmallestIdleFit(hetsched.Policy):
    """The idle allowed CPU of the least capacity (ties: the lowest number) whose
    capacity_of covers the task's util_est x HEADROOM; with none, cfs's choice."""

    name = "smallest-idle-fit"
    base = "cfs"

    def __init__(self) -> None:
        self.placed = 0  # wakeups this policy placed
        self.left = 0  # wakeups left to the base

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        need = view.task_util(task) * HEADROOM
        best, best_cap = None, None
        for cpu in view.cpus_allowed(task):  # ascending: the lowest number wins a tie
            if not view.idle_cpu(cpu) or view.capacity_of(cpu) < need:
                continue
            cap = view.capacity_orig(cpu)
            if best is None or cap < best_cap:
                best, best_cap = cpu, cap
        if best is None:
            self.left += 1
        else:
            self.placed += 1
        return best  # None: the base (cfs's select_idle_sibling) places this wakeup

    def counters(self):
        # reported in result.json's counters.policy, beside the base policy's
        return {"python_placed": self.placed, "python_left_to_base": self.left}


def main() -> None:
    print(f"{PLATFORM}, {WORKLOAD}, {DURATION_S:g} s simulated, seed {SEED}")
    print(f"{'scheduler':<24}{'energy [J]':>12}{'frames':>8}{'late frames':>13}{'placed / left to base':>24}")
    for scheduler in ("cfs", "eas", SmallestIdleFit()):
        sim = hetsched.Simulation(platform=PLATFORM, workload=WORKLOAD, scheduler=scheduler, seed=SEED,
                                  lower_bound=False)
        doc = sim.run(DURATION_S).doc
        video = doc["metrics"]["video"]
        label = doc["scheduler"] if isinstance(scheduler, str) else f"{doc['scheduler']} ({scheduler.base})"
        c = doc["counters"]["policy"]
        placed = f"{c['python_placed']} / {c['python_left_to_base']}" if "python_placed" in c else "-"
        print(f"{label:<24}{doc['energy_j']:>12.4f}{video['frames']:>8}{video['late_frames']:>13}{placed:>24}")


if __name__ == "__main__":
    main()
