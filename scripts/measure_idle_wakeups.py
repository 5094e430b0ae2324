#!/usr/bin/env python3
"""What waking a CPU in each cpuidle state costs on real phones, pooled over traces.

    python scripts/measure_idle_wakeups.py --platform sm8150 [--pool gold,prime] TRACE...

For every wakeup of a task that next ran on a CPU in a cpuidle state, the time from the
wakeup (sched_waking) to the task's switch-in there, split at the CPU's cpu_idle exit, the
same measure as ``hetsched trace-stats``'s "wakeup -> switch-in" rows, pooled over the
traces given (and over the clusters named in ``--pool``, which share their idle states).
The platforms' ``measured_wakeup_us`` (docs/mechanisms/idle.md, "Measured wakeups") come
from its p50 column.
"""

from __future__ import annotations

import argparse
import statistics
import sys


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--platform", required=True)
    ap.add_argument("--pool", action="append", default=[],
                    help="clusters measured as one, comma-separated (repeatable)")
    args = ap.parse_args()

    from hetsched.platforms import load_platform
    from hetsched.traces import load_trace
    from hetsched.traces.figures import wakeup_latency_samples

    plat = load_platform(args.platform)
    group = {}
    for spec in args.pool:
        names = spec.split(",")
        for n in names:
            group[n] = "+".join(names)
    pooled: dict = {}
    for path in args.traces:
        for (cl, what), (tot, to_exit, after) in wakeup_latency_samples(load_trace(path), plat).items():
            r = pooled.setdefault((group.get(cl, cl), what), ([], [], []))
            r[0].extend(tot), r[1].extend(to_exit), r[2].extend(after)
    print("| cluster | CPU was | wakeups | wakeup -> switch-in p25 / p50 / p75 (µs) | to exit p50 | exit to switch p50 |")
    print("|---|---|---|---|---|---|")
    for (cl, what), (tot, to_exit, after) in sorted(pooled.items()):
        q = statistics.quantiles(tot, n=4) if len(tot) > 1 else [tot[0]] * 3
        med = (lambda xs: f"{statistics.median(xs) / 1000:.1f}" if xs else "-")
        print(f"| {cl} | {what} | {len(tot)} | {q[0] / 1000:.1f} / {statistics.median(tot) / 1000:.1f} / "
              f"{q[2] / 1000:.1f} | {med(to_exit)} | {med(after)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
