#!/usr/bin/env python3
"""Run Learning EAS's power consumption test and write the networks it leaves.

    python scripts/learning_power_test.py [--platform NAME ...] [--check]

For each platform (default: every one of hetsched.learning.power_test.PLATFORMS, the
Learning EAS study's and gs101), Table 3's three scenes, 5 simulated minutes each, one
after the other, from a fresh network, in the observing mode (``learning.apply=0``); writes
python/hetsched/learning/data/power-test-PLATFORM.json, the state ``learning.state`` loads
and ``learning.initial=power-test`` (the default) starts from. The same code gives the same
bytes; --check compares instead of writing and exits 1 on a difference. A change of the
engine's behaviour changes the networks: run this again in the same commit. See
docs/learning.md, "The power consumption test".
"""

from __future__ import annotations

import argparse
import sys
import time


def main() -> int:
    from hetsched.learning import power_test as pt

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", action="append", choices=pt.PLATFORMS,
                    help="a platform (repeat); default: all of them")
    ap.add_argument("--check", action="store_true", help="compare with the shipped files instead of writing them")
    args = ap.parse_args()
    bad = 0
    for name in args.platform or pt.PLATFORMS:
        t0 = time.perf_counter()
        data = pt.state_bytes(name)
        out = pt.data_path(name)
        wall = time.perf_counter() - t0
        if args.check:
            same = out.is_file() and out.read_bytes() == data
            print(f"{out}: {'identical' if same else 'differs'} ({len(data)} bytes derived, {wall:.0f} s)")
            bad += not same
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        print(f"wrote {out} ({len(data)} bytes, {wall:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
