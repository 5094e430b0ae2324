#!/usr/bin/env python3
"""Derive the ``android-system`` workload's data from a real phone's trace.

    python scripts/derive_android_background.py [TRACE] [--check]

TRACE defaults to the Pixel 6a warm-launch Perfetto trace in ../shared/realdata/traces/.
Writes python/hetsched/workloads/data/android-pixel6a-launch.json.gz (gzip without a
timestamp, so the same trace gives the same bytes); --check compares instead of writing
and exits 1 on a difference. See docs/workloads-mobile.md, "The system beside the app".
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT.parent / "shared" / "realdata" / "traces" / "pixel6a_tensor_warm_startup.perfetto-trace"


def derived_bytes(trace_path: Path) -> bytes:
    from hetsched.platforms import load_platform
    from hetsched.traces import load_trace
    from hetsched.workloads.android import derive_background

    bg = derive_background(load_trace(trace_path), load_platform("gs101"))
    bg["source"] = trace_path.name
    text = json.dumps(bg, sort_keys=True, separators=(",", ":"))
    return gzip.compress(text.encode(), compresslevel=9, mtime=0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trace", nargs="?", type=Path, default=TRACE)
    ap.add_argument("--check", action="store_true", help="compare with the shipped file instead of writing it")
    args = ap.parse_args()
    from hetsched.workloads.android import BACKGROUNDS

    out = ROOT / "python" / "hetsched" / "workloads" / "data" / BACKGROUNDS["pixel6a-launch"][0]
    data = derived_bytes(args.trace)
    if args.check:
        same = out.is_file() and out.read_bytes() == data
        print(f"{out}: {'identical' if same else 'differs'} ({len(data)} bytes derived)")
        return 0 if same else 1
    out.write_bytes(data)
    print(f"wrote {out} ({len(data)} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
