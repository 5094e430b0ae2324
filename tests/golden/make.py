"""The golden set: result documents of every registered scheduler, extension and
governor on three platforms and four workloads, recorded so that a change of structure
can show it changed no result, to the byte.

    python tests/golden/make.py            # record (overwrites tests/golden/results/)
    python tests/golden/make.py --check    # compare, print the first difference of each

``tests/test_golden.py`` runs the comparison. A behaviour change records the set again
in its own commit and says in its message which results moved and why.

A case's document is ``Result.to_json()`` without ``wall_s`` (the only field that
depends on the machine); the Chrome trace, the time series and the lower bound's record
are kept as a SHA-256 of their bytes, since they are large.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
RTAPP = HERE.parent / "data" / "rtapp"

DURATION_S = 3.0
PLATFORMS = ("gs101", "sm8150", "hikey960")
WORKLOADS = ("phone-mix", "periodic", "hackbench:groups=2,loops=40", "game")
def _policies(switcher: bool) -> list[str]:
    """The registered policies, so that a new one joins the set without an edit here
    (recording it adds its cases; the others must stay identical)."""
    from hetsched.sim import registered_policies

    return [p["name"] for p in registered_policies() if p["switcher_platform"] == switcher]


def _case(scheduler, platform, workload, **kw):
    return dict(scheduler=scheduler, platform=platform, workload=workload, **kw)


def cases() -> list[dict]:
    out = [_case(s, p, w) for s in _policies(switcher=False) for p in PLATFORMS for w in WORKLOADS]
    sw = "exynos5422:switcher"
    for s in _policies(switcher=True):
        for w in ("periodic", "video:seconds=3", "job-stream:rate=40,jobs=60"):
            out.append(_case(s, sw, w, governor="ondemand"))
    out.append(_case("util-aware", sw, "job-stream:rate=40,jobs=60", governor="ondemand",
                     knobs={"util_aware.estimator": "b"}))
    # the vendor changes of paper 003, one at a time and all together
    vendor = ("vendor.cpu_isolation", "vendor.migration_margins", "vendor.task_packing",
              "vendor.prev_cpu_fastpath", "vendor.rt_placement")
    for k in vendor:
        out.append(_case("eas", "sm8150", "game", knobs={k: 1}))
    out.append(_case("eas", "sm8150", "phone-mix", knobs={k: 1 for k in vendor}))
    # hotplug (MediaTek hps) with GTS and with cfs
    out.append(_case("gts", "mt8173", "periodic", knobs={"hotplug": "hps"}))
    out.append(_case("cfs", "gs101", "phone-mix", knobs={"hotplug": "hps"}))
    # kernel profile, EEVDF, knobs that reach the core
    out.append(_case("eas", "sm8150", "game", knobs={"kernel": "android-4.19"}))
    out.append(_case("eas", "gs101", "phone-mix", knobs={"kernel": "android-4.19"}))
    # Qualcomm's msm-4.14 (WALT, schedtune, core_ctl, schedutil's hispeed and predicted
    # load) with its placement and with the fair class's, and its build without WALT
    for s, wl in (("eas", "game"), ("eas", "browsing"), ("cfs", "phone-mix")):
        out.append(_case(s, "sm8150", wl, knobs={"kernel": "msm-4.14"}))
    out.append(_case("eas", "sm8150", "app-launch", knobs={"kernel": "msm-4.14", "sched_walt": 0}))
    # the Pixel 6's kernel: the vendor placement hook, vendor groups, sched_pixel
    for wl in ("browsing", "app-launch"):
        out.append(_case("eas", "gs101", wl, knobs={"kernel": "pixel-5.10"}))
    for s in ("cfs", "eas"):
        out.append(_case(s, "gs101", "phone-mix", knobs={"fair.eevdf": 0}))
        out.append(_case(s, "hikey960", "hackbench:groups=2,loops=40", knobs={"fair.eevdf": 0}))
    out.append(_case("eas", "gs101", "game", knobs={"schedutil.target_load.cluster1": 0.9,
                                                     "sched_migration_cost_ns": 100000}))
    out.append(_case("hcs-balance", "hikey960", "spec-repeat:set=int4,repeats=1,scale_ms=5",
                     knobs={"hcs_balance_enabled": 0}))
    out.append(_case("hcs-td", "hikey960", "spec-repeat:set=int4,repeats=1,scale_ms=5",
                     knobs={"hcs_td.max_migrations": 4, "hcs_td.interval_ms": 4}))
    # every governor, and the oracle idle governor
    for g in ("performance", "powersave", "ondemand", "conservative", "interactive"):
        out.append(_case("cfs", "gs101", "phone-mix", governor=g))
        out.append(_case("eas", "hikey960", "periodic", governor=g))
    out.append(_case("cfs", "gs101", "phone-mix", governor="userspace", knobs={"userspace.khz": 1200000}))
    out.append(_case("eas", "gs101", "phone-mix", idle_governor="oracle"))
    out.append(_case("cfs", "sm8150", "game", idle_governor="oracle"))
    # other built-in workloads and real rt-app files (RT, deadline, uclamp, sync objects)
    for w in ("app-launch:launches=2,gap_s=0.3", "video:seconds=2", "job-stream:rate=30,jobs=40",
              "hackbench:groups=1,loops=20,ipc=pipe,mode=thread"):
        out.append(_case("eas", "gs101", w))
        out.append(_case("cfs", "sm8150", w))
    for f in sorted(RTAPP.glob("*.json")):
        if f.name == "rtapp_video-short.json":
            continue  # not JSON as published (rt-app's parser accepts it; ours rejects it)
        out.append(_case("cfs", "gs101", str(f)))
        out.append(_case("eas", "sm8150", str(f)))
        out.append(_case("baseline", "hikey960", str(f)))
    # runs to the end of a finite workload (no duration), with the lower bound
    out.append(_case("eas", "gs101", "hackbench:groups=2,loops=40", duration=None, lower_bound=True))
    out.append(_case("cfs", "hikey960", "job-stream:rate=40,jobs=30", duration=None, lower_bound=True))
    out.append(_case("gts", "sm8150", "phone-mix", lower_bound=True))
    # traces and time series
    for s, p, w in (("cfs", "gs101", "phone-mix"), ("eas", "sm8150", "game"),
                    ("hcs-td", "hikey960", "hackbench:groups=2,loops=40"), ("gts", "hikey960", "periodic")):
        out.append(_case(s, p, w, trace=True, timeseries=True, duration=1.0))
    out.append(_case("util-aware", sw, "periodic", governor="ondemand", trace=True, timeseries=True, duration=1.0))
    return out


def case_name(c: dict) -> str:
    wl = Path(c["workload"]).stem if c["workload"].endswith(".json") else c["workload"]
    parts = [c["scheduler"], c["platform"], wl]
    for k in ("governor", "idle_governor"):
        if k in c:
            parts.append(c[k])
    for k, v in sorted(c.get("knobs", {}).items()):
        parts.append(f"{k}={v}")
    for k in ("trace", "lower_bound"):
        if c.get(k):
            parts.append(k)
    if "duration" in c:
        parts.append(f"d{c['duration']}")
    return re.sub(r"[^A-Za-z0-9.=_+-]+", "_", "-".join(parts))


def run_case(c: dict) -> str:
    """The case's golden document, as text."""
    from hetsched.sim import Simulation

    sim = Simulation(platform=c["platform"], workload=c["workload"], scheduler=c["scheduler"],
                     governor=c.get("governor", "schedutil"), idle_governor=c.get("idle_governor", "menu"),
                     knobs=c.get("knobs"), seed=1, trace=c.get("trace", False),
                     timeseries=c.get("trace", False), lower_bound=c.get("lower_bound", False))
    res = sim.run(c.get("duration", DURATION_S))
    doc = dict(res.doc)
    del doc["wall_s"]
    if c.get("trace"):
        doc["trace.sha256"] = hashlib.sha256(sim.take_trace().encode()).hexdigest()
        doc["timeseries.sha256"] = hashlib.sha256(json.dumps(res.timeseries).encode()).hexdigest()
    return json.dumps(doc, indent=1) + "\n"


def path_of(c: dict) -> Path:
    return RESULTS / (case_name(c) + ".json.gz")


def read_golden(c: dict) -> str:
    return gzip.decompress(path_of(c).read_bytes()).decode()


def first_difference(a: str, b: str) -> str:
    """Where two documents first differ: the line number and both lines."""
    for i, (x, y) in enumerate(zip(a.splitlines(), b.splitlines())):
        if x != y:
            return f"line {i + 1}: golden {x.strip()!r}, now {y.strip()!r}"
    return f"lengths differ: golden {len(a)} characters, now {len(b)}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="compare with the recorded set instead of recording")
    args = ap.parse_args()
    all_cases = cases()
    names = [case_name(c) for c in all_cases]
    assert len(set(names)) == len(names), "two golden cases share a name"
    if not args.check:
        RESULTS.mkdir(parents=True, exist_ok=True)
        for old in RESULTS.glob("*.json.gz"):
            old.unlink()
    bad = 0
    for c in all_cases:
        text = run_case(c)
        if args.check:
            want = read_golden(c)
            if want != text:
                bad += 1
                print(f"{case_name(c)}: {first_difference(want, text)}")
        else:
            # mtime=0: the same document gives the same bytes on disk
            path_of(c).write_bytes(gzip.compress(text.encode(), mtime=0))
    print(f"{len(all_cases) - bad} identical, {bad} different" if args.check else f"recorded {len(all_cases)} cases")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
