"""Android's scheduling groups read from a trace (hetsched.traces.android_groups): each rule
checked against the group Android 13 gives that kind of thread (docs/traces.md, "Android's
scheduling groups"), and the replay writing them as the tasks' ``stune``."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from hetsched.traces import load_trace
from hetsched.traces.android_groups import cpuset_cpus, thread_cpuset, thread_group, thread_groups
from hetsched.traces.parse import Trace, iter_tasks, parse_text
from hetsched.traces.replay import ReplayOptions, build_replay

PIXEL = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "traces" / "pixel6a_tensor_warm_startup.perfetto-trace"


@pytest.mark.parametrize("process, adj, thread, main, group", [
    # the top app, named as the one in front; another process at 0 serves the foreground
    ("com.example.app", 0, "RenderThread", False, "top-app"),
    ("com.google.android.gms.persistent", 0, "binder:9_1", False, "foreground"),
    # visible, perceptible, persistent (System UI at -800, a bound persistent at -700)
    ("com.google.android.apps.nexuslauncher", 100, "launcher", True, "foreground"),
    ("com.google.android.inputmethod.latin", 200, "latin", True, "foreground"),
    ("com.android.systemui", -800, "ndroid.systemui", True, "foreground"),
    ("com.android.bluetooth", -700, "droid.bluetooth", True, "foreground"),
    # a started service (500), backup (300) and a cached app (905): background
    ("com.google.android.apps.scone", 500, "scone", True, "background"),
    ("com.example.backup", 300, "backup", True, "background"),
    ("com.android.vending", 905, "vending", True, "background"),
    # system_server: foreground, four threads moved to top-app
    ("system_server", -900, "binder:1858_1D", False, "foreground"),
    ("system_server", -900, "android.display", False, "top-app"),
    ("system_server", -900, "android.anim.lf", False, "top-app"),
    ("system_server", -900, "android.ui", False, "top-app"),
    # native daemons by their .rc
    ("surfaceflinger", -1000, "surfaceflinger", True, "root"),
    ("surfaceflinger", -1000, "RenderEngine", False, "rt"),
    ("surfaceflinger", -1000, "binder:513_2", False, "foreground"),
    ("audioserver", -1000, "audioserver", True, "foreground"),
    ("cameraserver", -1000, "cameraserver", True, "top-app"),
    ("android.hardware.camera.provider@2.7-service-google", -1000, "provider", True, "top-app"),
    ("logd", -1000, "logd.writer", False, "root"),
    ("android.hardware.sensors@2.1-service.multihal", -1000, "sensors@2.1-ser", True, "root"),
    # a process the trace gives no oom_score_adj (a kernel thread's)
    ("kworker/0:1", None, "kworker/0:1", True, "root"),
])
def test_a_threads_group_follows_android_13s_rules(process, adj, thread, main, group):
    assert thread_group(process, adj, thread, main, top_app="com.example.app") == group


def test_without_the_top_app_named_an_app_at_0_is_in_foreground():
    assert thread_group("com.example.app", 0, "RenderThread", False) == "foreground"


def test_a_trace_without_process_states_gives_no_groups():
    assert thread_groups(Trace(source="x", format="ftrace", tgids={5: 5}, process_names={5: "system_server"})) == {}


def test_the_replay_writes_each_tasks_group_as_its_stune():
    text = """\
           a-10    [000] d..2   100.000000: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=a next_pid=10 next_prio=120
           a-10    [000] d..2   100.000300: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=b next_pid=11 next_prio=120
           b-11    [000] d..2   100.000500: sched_switch: prev_comm=b prev_pid=11 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
"""
    rep = build_replay(parse_text(text.splitlines()), ReplayOptions(groups={10: "top-app"}))
    stune = {t["name"]: t.get("stune") for t in rep.spec["tasks"]}
    assert stune == {"a-10": "top-app", "b-11": None}
    assert rep.stats["tasks in the top-app group"] == 1


def test_the_pixel_6a_traces_threads_by_group():
    if not PIXEL.is_file():
        pytest.skip(f"{PIXEL} is not available")
    tr = load_trace(PIXEL)
    g = thread_groups(tr, top_app="androidx.benchmark.integration.macrobenchmark.target")
    comms = dict(iter_tasks(tr))
    names = {pid: tr.thread_names.get(pid) or comms.get(pid, "") for pid in g}
    ss = 1858  # system_server
    moved = sorted(names[p] for p, grp in g.items() if tr.tgids.get(p) == ss and grp == "top-app")
    assert moved == ["android.anim", "android.anim.lf", "android.display", "android.ui"]
    assert all(grp == "foreground" for p, grp in g.items() if tr.tgids.get(p) == ss and names[p] not in moved)
    app = [grp for p, grp in g.items() if tr.tgids.get(p) == 7663]
    assert app and set(app) == {"top-app"}
    # a cached app (com.android.vending, 905) and System UI (-800)
    assert {g[p] for p in g if tr.tgids.get(p) == 21530} == {"background"}
    assert {g[p] for p in g if tr.tgids.get(p) == 2348} == {"foreground"}
    # logd's threads and the kernel's stay in the root group
    assert not any(tr.process_names.get(tr.tgids.get(p)) == "logd" for p in g)
    assert Counter(g.values()) == {"foreground": 1532, "background": 800, "top-app": 101, "rt": 1}


@pytest.mark.parametrize("process, adj, thread, main, cpuset", [
    ("com.example.app", 0, "RenderThread", False, "top-app"),
    ("com.android.systemui", -800, "ndroid.systemui", True, "foreground"),
    ("com.android.vending", 905, "vending", True, "background"),
    # system_server: foreground; DisplayManagerService moves three threads with their
    # cpuset, android.ui's move is of its group only
    ("system_server", -900, "binder:1858_1D", False, "foreground"),
    ("system_server", -900, "android.anim", False, "top-app"),
    ("system_server", -900, "android.ui", False, "foreground"),
    # surfaceflinger: main thread and RenderEngine to top-app, binder threads in the root
    ("surfaceflinger", -1000, "surfaceflinger", True, "top-app"),
    ("surfaceflinger", -1000, "RenderEngine", False, "top-app"),
    ("surfaceflinger", -1000, "binder:513_2", False, None),
    # .rc cpuset profiles: ProcessCapacityHigh, ServiceCapacityLow, CameraServiceCapacity
    ("audioserver", -1000, "audioserver", True, "foreground"),
    ("zygote64", -1000, "main", True, "foreground"),
    ("logd", -1000, "logd.writer", False, "system-background"),
    ("android.hardware.graphics.composer@2.4-service", -1000, "composer", True, "system-background"),
    ("android.hardware.sensors@2.1-service.multihal", -1000, "sensors@2.1-ser", True, "system-background"),
    ("cameraserver", -1000, "cameraserver", True, "camera-daemon"),
    # nothing in its .rc (netd), a kernel thread
    ("netd", -1000, "netd", True, None),
    ("kworker/0:1", None, "kworker/0:1", True, None),
])
def test_a_threads_cpuset_follows_android_13s_rules(process, adj, thread, main, cpuset):
    assert thread_cpuset(process, adj, thread, main, top_app="com.example.app") == cpuset


def test_gs101s_cpusets_hold_the_background_to_their_cpus_and_other_platforms_do_not():
    # init.gs101.rc once boot has completed: background 0-1, system-background 0-3,
    # foreground 0-5, top-app and camera-daemon every CPU
    assert cpuset_cpus({"a": "background", "b": "system-background", "c": "foreground", "d": "top-app"},
                       "gs101") == {"a": [0, 1], "b": [0, 1, 2, 3], "c": [0, 1, 2, 3, 4, 5],
                                    "d": [0, 1, 2, 3, 4, 5, 6, 7]}
    assert cpuset_cpus({"a": "background"}, "sm8150") == {}
    from hetsched.workloads.android import background_spec

    def cpus(platform):
        spec = background_spec("pixel6a-launch", "recorded", 0.0, 0, False, platform)
        return {t["name"]: t["cpus"] for t in spec["tasks"]}

    on_gs101, on_sm8150 = cpus("gs101"), cpus("sm8150")
    assert on_gs101["logd.writer-464"] == [0, 1, 2, 3]
    assert on_gs101["binder:1858_1D-11234"] == [0, 1, 2, 3, 4, 5]
    assert on_gs101["rcuog/0-13"] is None
    assert all(v is None for v in on_sm8150.values())


def test_per_cpu_kernel_threads_are_bound_to_their_cpu():
    from hetsched.traces.replay import percpu_kthread_cpu

    # a per-CPU pool's workers (with a workqueue's name after them), ksoftirqd, cpuhp; an
    # unbound pool's worker and RCU's offload threads run anywhere
    assert [percpu_kthread_cpu(c) for c in ("kworker/3:1", "kworker/0:0H-kblockd", "ksoftirqd/7", "cpuhp/2",
                                             "kworker/u16:2", "rcuog/0", "ksoftirqd/1x")] == \
        [3, 0, 7, 2, None, None, None]
    text = """\
       <idle>-0    [001] d..2    99.999900: sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=kworker/1:1 next_pid=40 next_prio=120
  kworker/1:1-40   [001] d..2   100.000000: sched_switch: prev_comm=kworker/1:1 prev_pid=40 prev_prio=120 prev_state=S ==> next_comm=kworker/3:0 next_pid=41 next_prio=120
  kworker/3:0-41   [001] d..2   100.000200: sched_switch: prev_comm=kworker/3:0 prev_pid=41 prev_prio=120 prev_state=S ==> next_comm=a next_pid=10 next_prio=120
            a-10   [001] d..2   100.000500: sched_switch: prev_comm=a prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=swapper/1 next_pid=0 next_prio=120
"""
    tr = parse_text(text.splitlines())
    # replayed on 2 CPUs: kworker/1:1 bound to CPU 1; kworker/3:0's CPU is not there
    rep = build_replay(tr, ReplayOptions(include_kthreads=True, bind_percpu_kthreads=2))
    cpus = {t["name"]: t["cpus"] for t in rep.spec["tasks"]}
    assert cpus == {"kworker/1:1-40": [1], "kworker/3:0-41": None, "a-10": None}
    assert rep.stats["per-CPU kernel threads bound to their CPU"] == 1
    assert rep.stats["per-CPU kernel threads of CPUs the platform has not (left free)"] == 1
    # the recorded background: bound where the platform has the CPU
    from hetsched.workloads.android import background_spec

    spec = background_spec("pixel6a-launch", "recorded", 0.0, 0, False, "rk3399", 6)
    cpus = {t["name"]: t["cpus"] for t in spec["tasks"]}
    assert cpus["kworker/5:1-21235"] == [5] and cpus["kworker/6:1-2890"] is None
