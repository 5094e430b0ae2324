"""The rt-app loader (periodic subset): real files, grammar corners, bad values.

Expected numbers come from the JSON files and the rt-app grammar
(shared/reference/workloads.md §1, rt-app @55cb0c04), worked out by hand in the
comments: µs in the file × 1000 = ns in the spec, s × 10^9 = ns.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hetsched.errors import InputError
from hetsched.workloads import load_rtapp, merge_workloads, periodic, workload
from hetsched.workloads.rtapp import PHASE_LOG_COLUMNS, format_phase_log, phase_log

REALDATA = Path(__file__).resolve().parents[1] / "data" / "rtapp"  # copies of shared/realdata/rtapp
MS = 1_000_000  # ns


def load(text: str, **kw) -> dict:
    return load_rtapp(text, source="test.json", **kw)


def error(text: str) -> InputError:
    with pytest.raises(InputError) as exc:
        load(text)
    return exc.value


def one_task(body: str, glob: str = "") -> dict:
    """Load a file holding a single task ``t`` and return that task."""
    g = f', "global": {{{glob}}}' if glob else ""
    spec = load(f'{{"tasks": {{"t": {{{body}}}}}{g}}}')
    assert len(spec["tasks"]) == 1
    return spec["tasks"][0]


# ------------------------------------------------------------------ the real files

# Every file loads, except video-short.json: its bare `"suspend",` (line 6) is not JSON,
# and json-c 0.16 (rt-app's parser) rejects it too (shared/realdata/rtapp/SOURCES.md).
REJECTED = "rtapp_video-short.json"
LOADS = sorted(p.name for p in REALDATA.glob("*.json") if p.name != REJECTED)


def test_every_real_file_is_covered():
    assert len(LOADS) == 14
    assert (REALDATA / REJECTED).exists()


@pytest.mark.parametrize("name", LOADS)
def test_real_file_loads(name):
    spec = load_rtapp(REALDATA / name)
    assert spec["name"] == Path(name).stem
    assert spec["tasks"]
    json.dumps(spec)  # plain JSON-able data for the engine
    # every id is in range of its table (merge_workloads checks them all)
    merge_workloads([spec])


def test_video_is_rejected_like_json_c_does():
    path = REALDATA / REJECTED
    with pytest.raises(InputError) as exc:
        load_rtapp(path)
    err = exc.value
    assert err.source == str(path)
    assert err.field == "json"
    assert "Expecting ':' delimiter" in str(err)
    assert "\n" not in str(err)


def test_video_error_points_at_the_bare_suspend():
    path = REALDATA / "rtapp_video-short.json"
    lines = path.read_text().splitlines()
    line = next(i for i, l in enumerate(lines, 1) if l.strip() == '"suspend",')
    col = lines[line - 1].index(",") + 1
    with pytest.raises(InputError) as exc:
        load_rtapp(path)
    assert f"line {line}, column {col}:" in str(exc.value)


def test_example1():
    # "loop": -1, "run": 20000, "sleep": 80000 directly in the task; duration 2
    spec = load_rtapp(REALDATA / "rtapp_example1.json")
    assert spec["duration_ns"] == 2 * 10**9
    assert spec["timers"] == 0
    (t,) = spec["tasks"]
    assert t == {
        "name": "thread0-0", "policy": "other", "nice": 0, "rt_priority": 0,
        "cpus": None, "util_min": None, "util_max": None, "delay_ns": 0,
        # no "phases": the loop key is the phase count, the task runs once
        "loop": 1,
        "phases": [{"loop": -1, "events": [{"run": 20 * MS}, {"sleep": 80 * MS}]}],
    }


def test_example2():
    # run 10000 + timer {unique, 100000}: one timer
    spec = load_rtapp(REALDATA / "rtapp_example2.json")
    assert spec["timers"] == 1
    (t,) = spec["tasks"]
    assert t["loop"] == 1
    assert t["phases"] == [{"loop": -1, "events": [
        {"run": 10 * MS},
        {"timer": {"id": 0, "period_ns": 100 * MS, "mode": "relative"}}]}]


def test_example3():
    # instance 12, task loop 1, phases light (10 × run 3000 / timer 30000) and
    # heavy (10 × run 27000 / timer 30000); the same "unique" ref in both phases of a
    # thread is one timer, so 12 threads -> 12 timers; no global -> no duration
    spec = load_rtapp(REALDATA / "rtapp_example3.json")
    assert spec["duration_ns"] is None
    assert spec["timers"] == 12
    assert [t["name"] for t in spec["tasks"]] == [f"thread0-{i}" for i in range(12)]
    ids = []
    for t in spec["tasks"]:
        assert t["loop"] == 1
        light, heavy = t["phases"]
        assert light["loop"] == heavy["loop"] == 10
        assert light["events"][0] == {"run": 3 * MS}
        assert heavy["events"][0] == {"run": 27 * MS}
        tl, th = light["events"][1]["timer"], heavy["events"][1]["timer"]
        assert tl["period_ns"] == th["period_ns"] == 30 * MS
        assert tl["id"] == th["id"]
        ids.append(tl["id"])
    assert ids == list(range(12))


def test_spreading_tasks():
    # thread2 repeats the phase name "heavy1": workgen semantics keep both copies,
    # so it has 4 phases (900 light, 600 heavy, 300 light, 600 heavy)
    spec = load_rtapp(REALDATA / "rtapp_spreading-tasks.json")
    assert spec["duration_ns"] == 60 * 10**9
    assert spec["timers"] == 2
    t1, t2 = spec["tasks"]
    assert (t1["name"], t2["name"]) == ("thread1-0", "thread2-1")
    assert t1["loop"] == t2["loop"] == -1
    assert [p["loop"] for p in t1["phases"]] == [300, 300]
    assert [p["events"][0]["run"] for p in t1["phases"]] == [1 * MS, 7 * MS]
    assert [p["loop"] for p in t2["phases"]] == [900, 600, 300, 600]
    assert [p["events"][0]["run"] for p in t2["phases"]] == [1 * MS, 7 * MS, 1 * MS, 7 * MS]
    assert {p["events"][1]["timer"]["id"] for p in t1["phases"]} == {0}
    assert {p["events"][1]["timer"]["id"] for p in t2["phases"]} == {1}
    assert all(p["events"][1]["timer"]["period_ns"] == 10 * MS
               for t in (t1, t2) for p in t["phases"])


# ---------------------------------------------------------------------------- syntax

def test_comments_and_trailing_commas():
    spec = load("""
    // a line comment
    {
        /* a block
           comment */
        "tasks": {
            "a/*b*/c": {          // comment markers inside a string are text
                "cpus": [0, 1, ], /* trailing comma in an array */
                "run": 1000,
                "sleep": 2000,    // trailing comma in an object
            },
        },
        "global": {"duration": 3, "logdir": "//not/a/comment",},
    }
    """)
    (t,) = spec["tasks"]
    assert t["name"] == "a/*b*/c-0"
    assert t["cpus"] == [0, 1]
    assert t["phases"][0]["events"] == [{"run": 1 * MS}, {"sleep": 2 * MS}]
    assert spec["duration_ns"] == 3 * 10**9


def test_json_error_position_counts_comment_lines():
    text = '{\n/* one\n   two */\n"tasks": {"t": {"run": 1000 "sleep": 5}}}'
    err = error(text)
    # the missing comma: line 4, right after `1000 ` -> column of `"sleep"`
    col = text.splitlines()[3].index('"sleep"') + 1
    assert err.field == "json"
    assert f"line 4, column {col}: Expecting ',' delimiter" in str(err)


@pytest.mark.parametrize("text, msg", [
    ('{"tasks": {} /* never closed', "unterminated /* comment"),
    ('{"tasks": {,}}', "line 1, column 12"),
    ('{"tasks": {"t": {"run": 1}}} {}', "extra data"),
    ('{"tasks": {"t": {"run": NaN}}}', "NaN is not JSON"),
])
def test_malformed_json(text, msg):
    err = error(text)
    assert err.source == "test.json" and err.field == "json"
    assert msg in str(err)


def test_repeated_event_keys_are_a_sequence():
    t = one_task('"loop": 2, "run": 100, "sleep": 200, "run": 300, "sleep": 400')
    assert t["phases"][0]["events"] == [
        {"run": 100_000}, {"sleep": 200_000}, {"run": 300_000}, {"sleep": 400_000}]


def test_repeated_non_event_keys_are_refused():
    err = error('{"tasks": {"t": {"loop": 2, "run": 1, "loop": 3}}}')
    assert err.field == "tasks.t.loop#2"
    err = error('{"tasks": {"t": {"run": 1}, "t": {"run": 2}}}')
    assert err.field == "tasks.t#2"
    err = error('{"tasks": {"t": {"run": 1}}, "global": {"duration": 1, "duration": 2}}')
    assert err.field == "global.duration#2"
    err = error('{"tasks": {"t": {"run": 1, "timer": {"ref": "a", "ref": "b", "period": 1}}}}')
    assert err.field == "tasks.t.timer.ref#2"


def test_error_path_of_a_repeated_event():
    err = error('{"tasks": {"t": {"run": 1, "run": -5}}}')
    assert err.field == "tasks.t.run#2"


# -------------------------------------------------------------------- prefix matching

def test_event_keys_match_by_prefix():
    t = one_task('"run2": 1, "runtime": 2, "runtime7": 3, "run_fast": 4, "sleepy": 5, '
                 '"timer0": {"ref": "x", "period": 6}')
    assert t["phases"][0]["events"] == [
        {"run": 1000}, {"runtime": 2000}, {"runtime": 3000}, {"run": 4000},
        {"sleep": 5000}, {"timer": {"id": 0, "period_ns": 6000, "mode": "relative"}}]


# ---------------------------------------------------------------------------- timers

def test_shared_and_unique_timers():
    spec = load("""{"tasks": {
        "a": {"instance": 2, "phases": {
            "p1": {"run": 1, "timer": {"ref": "unique", "period": 10}},
            "p2": {"run": 1, "timer": {"ref": "unique", "period": 20},
                   "timer2": {"ref": "tick", "period": 30}},
            "p3": {"run": 1, "timer": {"ref": "uniqueB", "period": 40}}}},
        "b": {"run": 1, "timer": {"ref": "tick", "period": 50},
              "timer1": {"ref": "tock", "period": 60}}
    }}""")
    ids = [[ev["timer"]["id"] for p in t["phases"] for ev in p["events"] if "timer" in ev]
           for t in spec["tasks"]]
    # first appearance: a-0 unique=0, tick=1, a-0 uniqueB=2; a-1 unique=3 (tick is
    # shared: 1), a-1 uniqueB=4; b-2 tick=1, tock=5
    assert ids == [[0, 0, 1, 2], [3, 3, 1, 4], [1, 5]]
    assert spec["timers"] == 6
    periods = [ev["timer"]["period_ns"] for p in spec["tasks"][0]["phases"]
               for ev in p["events"] if "timer" in ev]
    assert periods == [10_000, 20_000, 30_000, 40_000]


def test_absolute_mode_belongs_to_the_timer():
    # rt-app marks the timer resource absolute when any of its events says so
    spec = load("""{"tasks": {
        "a": {"run": 1, "timer": {"ref": "tick", "period": 10}},
        "b": {"run": 1, "timer": {"ref": "tick", "period": 10, "mode": "absolute"}},
        "c": {"run": 1, "timer": {"ref": "other", "period": 10, "mode": "relative"}}
    }}""")
    modes = [t["phases"][0]["events"][1]["timer"]["mode"] for t in spec["tasks"]]
    assert modes == ["absolute", "absolute", "relative"]


@pytest.mark.parametrize("timer, field, says", [
    ('{"period": 10}', "tasks.t.timer.ref", "a timer 'ref'"),
    ('{"ref": "u"}', "tasks.t.timer.period", "a timer 'period'"),
    ('{"ref": "u", "period": 10, "mode": "abs"}', "tasks.t.timer.mode", "\"absolute\""),
    ('{"ref": "u", "period": -1}', "tasks.t.timer.period", "an integer >= 0"),
    ('{"ref": "u", "period": 10, "perod": 1}', "tasks.t.timer.perod", "did you mean 'period'"),
    ('10000', "tasks.t.timer", "a timer object"),
])
def test_bad_timers(timer, field, says):
    err = error(f'{{"tasks": {{"t": {{"run": 1, "timer": {timer}}}}}}}')
    assert err.field == field
    assert says in str(err)


# ----------------------------------------------------------------------- loop table

@pytest.mark.parametrize("body, task_loop, phase_loops", [
    # without "phases": no loop key -> the task loops forever over one phase
    ('"run": 1', -1, [1]),
    # ... a loop key is the phase count and the task runs once
    ('"loop": 5, "run": 1', 1, [5]),
    ('"loop": -1, "run": 1', 1, [-1]),
    # with "phases": task loop defaults to -1, phase loop to 1
    ('"phases": {"a": {"run": 1}, "b": {"loop": 4, "run": 1}}', -1, [1, 4]),
    ('"loop": 3, "phases": {"a": {"run": 1}}', 3, [1]),
    ('"phases": {"a": {"loop": -1, "run": 1}}', -1, [-1]),
])
def test_loop_semantics(body, task_loop, phase_loops):
    t = one_task(body)
    assert t["loop"] == task_loop
    assert [p["loop"] for p in t["phases"]] == phase_loops


@pytest.mark.parametrize("body, field", [
    ('"loop": 0, "run": 1', "tasks.t.loop"),
    ('"loop": -2, "run": 1', "tasks.t.loop"),
    ('"phases": {"a": {"loop": 0, "run": 1}}', "tasks.t.phases.a.loop"),
    ('"loop": 1.5, "run": 1', "tasks.t.loop"),
])
def test_bad_loops(body, field):
    err = error(f'{{"tasks": {{"t": {{{body}}}}}}}')
    assert err.field == field
    assert "a positive integer, or -1 for forever" in str(err)


# ------------------------------------------------------------- instances and names

def test_instances_and_thread_names():
    # rt-app numbers threads across the whole file (rt-app.c main(): ind++), and a
    # task with instance 0 creates no thread (it exists only for "fork")
    spec = load("""{"tasks": {
        "a": {"instance": 2, "run": 1},
        "ghost": {"instance": 0, "run": 1},
        "b": {"run": 1}
    }}""")
    assert [t["name"] for t in spec["tasks"]] == ["a-0", "a-1", "b-2"]


def test_only_instance_zero_is_refused():
    err = error('{"tasks": {"ghost": {"instance": 0, "run": 1}}}')
    assert err.field == "tasks"


def test_delay_and_properties():
    t = one_task('"delay": 1500, "cpus": [3, 1, 3], "util_min": 128, "util_max": -1, '
                 '"priority": -5, "run": 1')
    assert t["delay_ns"] == 1_500_000
    assert t["cpus"] == [1, 3]
    assert (t["util_min"], t["util_max"]) == (128, None)
    assert (t["policy"], t["nice"], t["rt_priority"]) == ("other", -5, 0)


@pytest.mark.parametrize("body, glob, policy, nice, rt", [
    ('"run": 1', "", "other", 0, 0),
    ('"policy": "SCHED_FIFO", "run": 1', "", "fifo", 0, 10),    # rt-app default RT prio
    ('"policy": "RR", "priority": 50, "run": 1', "", "rr", 0, 50),
    ('"policy": "OTHER", "priority": 19, "run": 1', "", "other", 19, 0),
    ('"run": 1', '"default_policy": "SCHED_FIFO"', "fifo", 0, 10),
    ('"policy": "SCHED_OTHER", "run": 1', '"default_policy": "SCHED_RR"', "other", 0, 0),
])
def test_policy_and_priority(body, glob, policy, nice, rt):
    t = one_task(body, glob)
    assert (t["policy"], t["nice"], t["rt_priority"]) == (policy, nice, rt)


@pytest.mark.parametrize("body, field, says", [
    ('"util_max": 2000, "run": 1', "tasks.t.util_max", "from 0 to 1024"),
    ('"util_min": -2, "run": 1', "tasks.t.util_min", "from 0 to 1024"),
    ('"util_min": 600, "util_max": 500, "run": 1', "tasks.t.util_min", "util_min <= util_max"),
    ('"run": -1', "tasks.t.run", "an integer >= 0 (µs)"),
    ('"sleep": "1000"', "tasks.t.sleep", "got '1000'"),
    ('"runtime": 1.5', "tasks.t.runtime", "got 1.5"),
    ('"run": true', "tasks.t.run", "got True"),
    ('"run": 1, "delay": -1', "tasks.t.delay", ">= 0"),
    ('"run": 1, "instance": "2"', "tasks.t.instance", "an integer >= 0"),
    ('"run": 1, "cpus": []', "tasks.t.cpus", "a non-empty array"),
    ('"run": 1, "cpus": [0, "1"]', "tasks.t.cpus[1]", "a CPU number"),
    ('"run": 1, "cpus": 2', "tasks.t.cpus", "a non-empty array"),
    ('"run": 1, "priority": 20', "tasks.t.priority", "a nice value from -20 to 19"),
    ('"run": 1, "policy": "SCHED_FIFO", "priority": 0', "tasks.t.priority",
     "an RT priority from 1 to 99"),
    ('"run": 1, "policy": "SCHED_FOO"', "tasks.t.policy", "did you mean 'SCHED_FIFO'"),
    ('"run": 1, "cpu": [0]', "tasks.t.cpu", "did you mean 'cpus'"),
    ('"run": 1, "dl-period": -10', "tasks.t.dl-period", "an integer >= 0 (µs)"),
    ('"run": 1, "taskgroup": "a"', "tasks.t.taskgroup", "starting with '/'"),
    ('"run": 1, "policy": "SCHED_DEADLINE"', "tasks.t.dl-runtime", "a dl-runtime > 0"),
    ('"run": 1, "policy": "SCHED_DEADLINE", "dl-runtime": 10, "dl-period": 5',
     "tasks.t.dl-runtime", "dl-runtime <= dl-deadline <= dl-period"),
    ('"run": 1, "phases": {"p": {"run": 1}}', "tasks.t.run", "no events beside 'phases'"),
    ('"phases": {"p": {"loop": 2}}', "tasks.t.phases.p", "at least one event"),
    ('"phases": {}', "tasks.t.phases", "at least one phase"),
    ('"loop": 3', "tasks.t", "events or a 'phases' object"),
    ('"phases": {"p": {"run": 1, "util_max": 2000}}', "tasks.t.phases.p.util_max",
     "from 0 to 1024"),
    ('"phases": {"p": {"run": 1, "policy": "SCHED_FIFO", "priority": 0}}',
     "tasks.t.phases.p.priority", "an RT priority from 1 to 99"),
    ('"phases": {"p": {"run": 1, "policy": "SCHED_DEADLINE"}}', "tasks.t.phases.p.policy",
     "set it on the task"),
    ('"run": 1, "lock": 3', "tasks.t.lock", "a mutex name (a string)"),
    ('"run": 1, "wait": {"ref": "c"}', "tasks.t.wait.mutex", "'mutex' in wait"),
    ('"run": 1, "sync": {"ref": "c", "mutex": "m", "x": 1}', "tasks.t.sync.x",
     "a sync key: ref or mutex"),
    ('"run": 1, "mem": -1', "tasks.t.mem", "an integer >= 0 (bytes)"),
    ('"run": 1, "memrun": {"type": "scan", "size": 1, "count": 1}', "tasks.t.memrun.type",
     '"read", "write" or "chase"'),
    ('"run": 1, "memrun": {"type": "read", "size": 64}', "tasks.t.memrun.count",
     "a memrun 'count'"),
    ('"run": 1, "barrier": ["b"]', "tasks.t.barrier", "a barrier name"),
    ('"run": 1, "nodes_membind": 0', "tasks.t.nodes_membind", "an array of NUMA node"),
    ('"phases": {"p": {"run": 1, "lop": 2}}', "tasks.t.phases.p.lop", "did you mean 'loop'"),
])
def test_bad_values_name_their_field(body, field, says):
    err = error(f'{{"tasks": {{"t": {{{body}}}}}}}')
    assert err.source == "test.json"
    assert err.field == field
    assert str(err).startswith(f"test.json: {field}: expected ")
    assert says in str(err)


# ---------------------------------------------------------------------------- global

@pytest.mark.parametrize("glob, duration", [
    ('"duration": -1', None),
    ('"duration": 7', 7 * 10**9),
    ('"calibration": 180, "frag": 1, "ftrace": false, "log_size": "file"', None),
    ('"calibration": "CPU4", "gnuplot": true, "pi_enabled": true', None),
])
def test_global(glob, duration):
    spec = load(f'{{"tasks": {{"t": {{"run": 1}}}}, "global": {{{glob}}}}}')
    assert spec["duration_ns"] == duration


@pytest.mark.parametrize("text, field, says", [
    ('{"tasks": {"t": {"run": 1}}, "global": {"duraton": 1}}', "global.duraton",
     "did you mean 'duration'"),
    ('{"tasks": {"t": {"run": 1}}, "global": {"duration": 0}}', "global.duration",
     "a positive integer (s), or -1"),
    ('{"tasks": {"t": {"run": 1}}, "global": {"calibration": "big"}}', "global.calibration",
     "\"CPUn\""),
    ('{"tasks": {"t": {"run": 1}}, "globals": {}}', "globals", "did you mean 'global'"),
    ('{"global": {}}', "tasks", "a 'tasks' object"),
    ('[1]', "json", "a top-level JSON object"),
])
def test_bad_global(text, field, says):
    err = error(text)
    assert err.field == field
    assert says in str(err)


def test_resources_section_is_ignored():
    spec = load('{"resources": {"m": {"type": "mutex"}}, "tasks": {"t": {"run": 1}}}')
    assert len(spec["tasks"]) == 1


# -------------------------------------------------------------------- entry points

def test_path_text_source_and_name(tmp_path):
    p = tmp_path / "my-load.json"
    p.write_text('{"tasks": {"t": {"run": 1}}}')
    assert load_rtapp(p)["name"] == "my-load"
    assert load_rtapp(str(p))["name"] == "my-load"
    assert load_rtapp(p.read_text())["name"] == "rtapp"
    assert load_rtapp(p.read_text(), source="x/y.json")["name"] == "y"
    assert load_rtapp(p, name="n")["name"] == "n"
    with pytest.raises(InputError) as exc:
        load_rtapp(p.read_text().replace("1", "-1"), source="--workload")
    assert str(exc.value).startswith("--workload: tasks.t.run: ")


def test_missing_file():
    with pytest.raises(InputError) as exc:
        load_rtapp("/nonexistent/x.json")
    assert exc.value.field == "file"
    assert str(exc.value).startswith("/nonexistent/x.json: file: ")


# ------------------------------------------------------------------ building blocks

def test_periodic_lisa_mapping():
    # LISA PeriodicWload(100 ms, 20 %, 1 s): loop floor(1 s / 100 ms) = 10, run 20000 µs
    t = periodic("small", period_us=100_000, run_us=0.20 * 100_000, count=1_000_000 // 100_000)
    assert t["loop"] == 1
    assert t["phases"] == [{"loop": 10, "events": [
        {"run": 20 * MS}, {"timer": {"id": 0, "period_ns": 100 * MS, "mode": "relative"}}]}]
    forever = periodic("f", 16_000, 1_000, nice=-5, cpus=[2, 1], delay_us=10)
    assert (forever["loop"], forever["phases"][0]["loop"]) == (-1, 1)
    assert (forever["nice"], forever["cpus"], forever["delay_ns"]) == (-5, [1, 2], 10_000)


@pytest.mark.parametrize("kw", [{"period_us": 0}, {"run_us": -1}, {"count": 0},
                                {"nice": 20}, {"cpus": []}])
def test_periodic_rejects(kw):
    args = {"name": "p", "period_us": 1000, "run_us": 100} | kw
    with pytest.raises(InputError):
        periodic(**args)


def test_workload_gives_each_task_its_timer():
    spec = workload("three", [periodic(f"p{i}", 1000 * (i + 1), 100) for i in range(3)],
                    duration_ns=5 * 10**9)
    assert spec["timers"] == 3
    assert [t["phases"][0]["events"][1]["timer"]["id"] for t in spec["tasks"]] == [0, 1, 2]
    assert spec["duration_ns"] == 5 * 10**9


def test_merge_workloads_renumbers_timers():
    ex2 = load_rtapp(REALDATA / "rtapp_example2.json")      # 1 timer, 2 s
    ex3 = load_rtapp(REALDATA / "rtapp_example3.json")      # 12 timers, no duration
    merged = merge_workloads([ex2, ex3])
    assert merged["timers"] == 13
    assert len(merged["tasks"]) == 1 + 12
    assert merged["name"] == "rtapp_example2+rtapp_example3"
    assert merged["duration_ns"] is None
    ids = [ev["timer"]["id"] for t in merged["tasks"] for p in t["phases"]
           for ev in p["events"] if "timer" in ev]
    assert ids == [0] + [1 + i for i in range(12) for _ in range(2)]
    # inputs untouched
    assert ex3["tasks"][0]["phases"][0]["events"][1]["timer"]["id"] == 0
    ex1 = load_rtapp(REALDATA / "rtapp_example1.json")      # 2 s
    spread = load_rtapp(REALDATA / "rtapp_spreading-tasks.json")  # 60 s
    assert merge_workloads([ex1, spread])["duration_ns"] == 60 * 10**9
    assert merge_workloads([ex1, spread], duration_ns=None)["duration_ns"] is None


def test_a_hash_in_a_name_is_not_a_repeat():
    spec = load('{"tasks": {"a#1": {"run": 1}, "a": {"run": 1, "loop": 2}}}')
    assert [t["name"] for t in spec["tasks"]] == ["a#1-0", "a-1"]


# ===================================================================== full grammar
# Lowering of every rt-app event to the engine's (docs/engine-interface.md, last
# section), with the expectations worked out by hand from rt-app @55cb0c04
# (src/rt-app.c run_event(), src/rt-app_parse_config.c).

def events(task: dict, phase: int = 0) -> list[dict]:
    return task["phases"][phase]["events"]


def suspend_of(m: int, c: int) -> list[dict]:
    # rt-app's suspend: lock(own mutex); pthread_cond_wait(own cond, own mutex); unlock
    return [{"lock": m}, {"wait": {"cond": c, "mutex": m}}, {"unlock": m}]


def resume_of(m: int, c: int) -> list[dict]:
    # rt-app's resume X: lock(X's mutex); pthread_cond_broadcast(X's cond); unlock
    return [{"lock": m}, {"broad": c}, {"unlock": m}]


def test_example4_ping_pong_on_each_others_key():
    spec = load_rtapp(REALDATA / "rtapp_example4.json")
    t0, t1 = spec["tasks"]
    assert (t0["name"], t1["name"]) == ("thread0-0", "thread1-1")
    # resources by first appearance: thread1's pair (resumed by thread0) is 0, thread0's 1
    assert spec["mutexes"] == spec["conds"] == 2
    assert events(t0) == [{"run": 10 * MS}, *resume_of(0, 0), *suspend_of(1, 1)]
    assert events(t1) == [{"run": 10 * MS}, *resume_of(1, 1), *suspend_of(0, 0)]
    assert (t0["loop"], t0["phases"][0]["loop"]) == (1, -1)


def test_example5_repeated_keys_and_sync_objects():
    spec = load_rtapp(REALDATA / "rtapp_example5.json")
    t0, t1 = spec["tasks"]
    assert (t0["nice"], t0["cpus"], t1["nice"], t1["cpus"]) == (-19, [0], -19, [1])
    assert t0["loop"] == 1 and [p["loop"] for p in t0["phases"]] == [1, 8]
    assert events(t0, 0) == [{"sleep": 10 * MS}]
    # mutex "mutex" = 0, cond "queue" = 0, thread1's pair = 1, timer "tick" = 0
    assert events(t0, 1) == [
        {"lock": 0}, {"run": 10 * MS}, {"signal": 0}, {"run": 10 * MS}, {"unlock": 0},
        {"run": 100 * MS}, *resume_of(1, 1),
        {"timer": {"id": 0, "period_ns": 200 * MS, "mode": "relative"}}]
    # "loop": 3 without phases: task loop 1, phase loop 3; three runs, two suspends
    assert (t1["loop"], t1["phases"][0]["loop"]) == (1, 3)
    assert events(t1) == [
        {"lock": 0}, {"wait": {"cond": 0, "mutex": 0}}, {"unlock": 0}, {"run": 10 * MS},
        *suspend_of(1, 1), {"run": 10 * MS}, *suspend_of(1, 1), {"run": 10 * MS}]


def test_example6_mem_and_iorun_costs():
    # mem 1000 B memset at 8 B/ns = 125 ns; iorun 100000 B to /dev/null in chunks of
    # mem_buffer_size 1048576: one write() = 500 ns of CPU work
    (t,) = load_rtapp(REALDATA / "rtapp_example6.json")["tasks"]
    assert events(t) == [{"run": 1 * MS}, {"memrun": 125}, {"sleep": 5 * MS}, {"run": 500}]


def test_example7_barrier_counts():
    spec = load_rtapp(REALDATA / "rtapp_example7.json")
    assert spec["barriers"] == [2, 2, 2]       # FIRST, SECOND, THIRD: both threads
    t0, t1 = spec["tasks"]
    assert events(t0) == [{"runtime": 1 * MS}, {"sleep": 2 * MS}, {"barrier": 0},
                          {"runtime": 2 * MS}, {"barrier": 1}, {"runtime": 1 * MS},
                          {"sleep": 2 * MS}, {"barrier": 2}]
    assert events(t1) == [{"runtime": 2 * MS}, {"barrier": 0}, {"runtime": 1 * MS},
                          {"sleep": 2 * MS}, {"barrier": 1}, {"runtime": 2 * MS},
                          {"barrier": 2}]


def test_example8_phase_cpus_hold_for_their_phase():
    (t,) = load_rtapp(REALDATA / "rtapp_example8.json")["tasks"]
    assert t["cpus"] == [2] and t["loop"] == -1
    # phase1 on CPU0, phase2 on CPU1, phase3 back on the task's CPU2
    assert [events(t, i)[0] for i in range(3)] == [
        {"setattr": {"cpus": [0]}}, {"setattr": {"cpus": [1]}}, {"setattr": {"cpus": [2]}}]
    assert [events(t, i)[1:] for i in range(3)] == [[{"run": 1500_000}]] * 3


def test_example9_fork_templates():
    spec = load_rtapp(REALDATA / "rtapp_example9.json")
    names = [(t["name"], t.get("start", True)) for t in spec["tasks"]]
    # thread1 runs from the start and is a template too; thread2 (instance 0) is only a
    # template; templates are named as rt-app names the first fork of each
    # (<key>-<index>-<nnnn>: indices 2 and 3 after the 2 started threads)
    assert names == [("thread1-0", True), ("thread3-1", True), ("thread1-2", False),
                     ("thread2-3", False)]
    t3 = spec["tasks"][1]
    assert t3["loop"] == 1
    assert events(t3, 0) == [{"fork": 2}, {"run": 10 * MS}, {"sleep": 10 * MS}]
    assert events(t3, 1) == [{"fork": 3}, {"run": 20 * MS}, {"sleep": 20 * MS}]
    assert events(spec["tasks"][3]) == [{"run": 20 * MS}, {"sleep": 20 * MS}]


def test_custom_slice_and_deadline():
    t0, t1 = load_rtapp(REALDATA / "rtapp_custom-slice.json")["tasks"]
    # SCHED_OTHER + dl-runtime 100000 µs: sched_attr.sched_runtime = the custom slice
    assert (t0["policy"], t0["nice"], t0["slice_ns"]) == ("other", -19, 100 * MS)
    # SCHED_DEADLINE with only dl-runtime: period = runtime, deadline = period
    assert t1["policy"] == "deadline"
    assert (t1["dl_runtime_ns"], t1["dl_period_ns"], t1["dl_deadline_ns"]) == (
        200 * MS, 200 * MS, 200 * MS)


def test_browser_suspend_waits_on_its_own_key():
    spec = load_rtapp(REALDATA / "rtapp_browser-short.json")
    by = {t["name"].rsplit("-", 1)[0]: t for t in spec["tasks"]}
    main, sub1, sub2 = by["BrowserMain"], by["BrowserSub1"], by["BrowserSub2"]
    assert main["loop"] == 3
    assert [p["loop"] for p in main["phases"]] == [1, 50, 1, 20, 1, 4, 1]
    # render1 resumes "BrowserSub": a cond nobody waits on, since BrowserSub1/2 wait on
    # the conds of their own keys (the value of "suspend" is ignored)
    broad = events(main, 1)[1]["broad"]
    w1, w2 = events(sub1)[1]["wait"], events(sub2)[1]["wait"]
    assert len({broad, w1["cond"], w2["cond"]}) == 3
    # the start phase: sleep, run, resume Browser (3 events), run, sleep
    assert [next(iter(e)) for e in events(main, 0)] == [
        "sleep", "run", "lock", "broad", "unlock", "run", "sleep"]
    disp = events(by["BrowserDisplay"])
    i = next(i for i, e in enumerate(disp) if "sync" in e)
    assert disp[i - 1] == {"lock": disp[i]["sync"]["mutex"]}
    assert disp[i + 1] == {"unlock": disp[i]["sync"]["mutex"]}


def test_mp3_shared_tick_and_resume_chain():
    spec = load_rtapp(REALDATA / "rtapp_mp3-short.json")
    assert spec["timers"] == 1          # "tick" is shared by its two phases
    tick, out = spec["tasks"][0], spec["tasks"][1]
    assert [p["loop"] for p in tick["phases"]] == [1, 4]
    assert tick["cpus"] == [0] and tick["nice"] == -19
    # AudioTick resumes AudioOut, which suspends on its own key: same cond
    assert events(tick, 0)[1]["broad"] == events(out)[-2]["wait"]["cond"]


def test_camera_loads_every_thread():
    spec = load_rtapp(REALDATA / "wa_camera-short.json")
    assert len(spec["tasks"]) == 57
    assert all(t.get("start", True) for t in spec["tasks"])
    assert spec["timers"] == 3 and spec["duration_ns"] == 6 * 10**9


# ------------------------------------------------------------------ events, inline

def test_suspend_ignores_its_value_and_resume_of_nobody_is_accepted():
    spec = load('{"tasks": {"a": {"run": 1, "suspend": "zzz", "resume": "nobody"}}}')
    (t,) = spec["tasks"]
    # own pair "a" = 0, then "nobody" = 1 (a lost wakeup, as in rt-app)
    assert events(t) == [{"run": 1000}, *suspend_of(0, 0), *resume_of(1, 1)]


def test_mutex_and_cond_names_are_rt_apps_namespaces():
    # resume X uses the mutex and cond named X: the same objects as lock X / wait {ref X}
    spec = load('''{"tasks": {
        "w": {"lock": "X", "wait": {"ref": "X", "mutex": "X"}, "unlock": "X", "run": 1},
        "r": {"run": 1, "resume": "X", "signal1": "Y", "broad": "X"}}}''')
    w, r = spec["tasks"]
    assert events(w)[:3] == [{"lock": 0}, {"wait": {"cond": 0, "mutex": 0}}, {"unlock": 0}]
    assert events(r) == [{"run": 1000}, *resume_of(0, 0), {"signal": 1}, {"broad": 0}]
    assert (spec["mutexes"], spec["conds"]) == (1, 2)


def test_sync_sems_yield():
    spec = load('''{"tasks": {
        "p": {"run": 5, "sem_post": "s", "yield": 0, "lock": "m",
              "sync": {"ref": "c", "mutex": "m"}, "unlock": "m"},
        "c": {"sem_wait": "s", "sem_wait1": "t", "run": 5}}}''')
    p, c = spec["tasks"]
    assert events(p) == [{"run": 5000}, {"sem_post": 0}, {"yield": None}, {"lock": 0},
                         {"sync": {"cond": 0, "mutex": 0}}, {"unlock": 0}]
    assert events(c) == [{"sem_wait": 0}, {"sem_wait": 1}, {"run": 5000}]
    assert spec["sems"] == [0, 0]          # rt-app: sem_init(.., 0)


def test_barrier_count_is_threads_that_use_it():
    spec = load('''{"tasks": {
        "a": {"instance": 3, "run": 1, "barrier": "B", "barrier2": "B"},
        "b": {"run": 1, "barrier": "B", "barrier1": "C"},
        "ghost": {"instance": 0, "barrier": "C"}}}''')
    assert spec["barriers"] == [4, 1]      # B: a-0..a-2 and b-3; C: b-3 (ghost never runs)


@pytest.mark.parametrize("memrun, ns", [
    ('{"type": "write", "size": 4096, "count": 10000}', 10000),        # 1 B/ns
    ('{"type": "read", "size": 4096, "count": 3000, "ref": "shared"}', 3000),
    ('{"type": "chase", "size": 67108864, "count": 1000}', 100 * 1000),  # random, > LLC
    ('{"type": "chase", "size": 67108864, "count": 1000, "pattern": "sequential"}', 5000),
    ('{"type": "chase", "size": 65536, "count": 1000, "stride": 128}', 5000),   # in cache
])
def test_memrun_costs(memrun, ns):
    t = one_task(f'"memrun": {memrun}')
    assert events(t) == [{"memrun": ns}]


def test_iorun_to_a_file_copies_the_bytes():
    # 10 MiB to a file, 4 MiB buffer: 3 write()s of 500 ns, plus a copy at 4 B/ns
    t = one_task('"iorun": 10485760', '"io_device": "/tmp/x"')
    assert events(t) == [{"run": 1500}, {"memrun": 10485760 // 4}]


@pytest.mark.parametrize("body, field, says", [
    ('"fork": "nope", "run": 1', "tasks.t.fork", "got 'nope'"),
    ('"unlock": "m", "run": 1', "tasks.t.unlock", "no 'lock' takes 'm'"),
    ('"wait": {"ref": "c", "mutex": "m"}, "run": 1', "tasks.t.wait", "no 'lock' takes 'm'"),
])
def test_missing_references_are_named(body, field, says):
    err = error(f'{{"tasks": {{"t": {{{body}}}}}}}')
    assert err.field == field
    assert says in str(err)


def test_fork_of_a_misspelt_task_suggests_it():
    err = error('{"tasks": {"worker": {"instance": 0, "run": 1}, "t": {"fork": "wroker"}}}')
    assert err.field == "tasks.t.fork" and "did you mean 'worker'" in str(err)


def test_barrier_in_a_forked_task_is_refused():
    err = error('{"tasks": {"w": {"instance": 0, "run": 1, "barrier": "B"}, '
                '"t": {"fork": "w", "barrier": "B"}}}')
    assert err.field == "tasks.w.barrier"
    assert "forked copies of 'w'" in str(err)


def test_forked_template_keeps_unique_timers_of_its_own():
    spec = load('''{"tasks": {
        "w": {"run": 1, "timer": {"ref": "unique", "period": 10}},
        "t": {"fork": "w", "timer": {"ref": "unique", "period": 20}}}}''')
    ids = [e["timer"]["id"] for t in spec["tasks"] for e in events(t) if "timer" in e]
    assert [t["name"] for t in spec["tasks"]] == ["w-0", "t-1", "w-2"]
    assert ids == [0, 1, 2] and spec["timers"] == 3


# --------------------------------------------------------------- properties, inline

@pytest.mark.parametrize("body, expect", [
    ('"policy": "SCHED_BATCH", "priority": 5, "run": 1', ("other", 5, 0)),
    ('"policy": "SCHED_IDLE", "priority": -5, "run": 1', ("other", 19, 0)),
    ('"policy": "SCHED_RR", "run": 1', ("rr", 0, 10)),
])
def test_batch_idle_rr(body, expect):
    t = one_task(body)
    assert (t["policy"], t["nice"], t["rt_priority"]) == expect


def test_legacy_runtime_key_is_also_the_slice():
    # parse_sched_data() reads the exact key "runtime" as the legacy dl-runtime: a 50 µs
    # custom slice, clamped by the kernel to 100 µs; "runtime1" is only an event
    assert one_task('"runtime": 50, "sleep": 10')["slice_ns"] == 100_000
    assert "slice_ns" not in one_task('"runtime1": 50, "sleep": 10')


def test_phase_properties_become_setattr_events():
    spec = load('''{"tasks": {"t": {"priority": 3, "cpus": [4, 5], "phases": {
        "a": {"run": 1},
        "b": {"priority": -5, "util_min": 256, "util_max": -1, "run": 1},
        "c": {"policy": "SCHED_FIFO", "cpus": [1], "run": 1},
        "d": {"policy": "SCHED_OTHER", "taskgroup": "/bg", "nodes_membind": [0], "run": 1},
        "e": {"run": 1}}}}}''')
    (t,) = spec["tasks"]
    first = [events(t, i)[0] for i in range(5)]
    assert first == [
        # a: the phase before it (e, on the next task loop) is on the task's CPUs too
        {"run": 1000},
        {"setattr": {"policy": "other", "nice": -5, "util_min": 256}},
        # FIFO without priority: rt-app's default RT priority 10; cpus for this phase only
        {"setattr": {"policy": "fifo", "rt_priority": 10, "cpus": [1]}},
        {"setattr": {"policy": "other", "nice": 0, "cpus": [4, 5]}},
        {"run": 1000}]
    assert t["phases"][3]["taskgroup"] == "/bg"
    assert (t["nice"], t["cpus"]) == (3, [4, 5])


def test_phase_priority_follows_the_current_policy():
    # no policy in the phase: the priority is read for the policy in force (FIFO)
    t = one_task('"policy": "SCHED_FIFO", "phases": {"a": {"priority": 42, "run": 1}}')
    assert events(t)[0] == {"setattr": {"policy": "fifo", "rt_priority": 42}}
    err = error('{"tasks": {"t": {"policy": "SCHED_FIFO", "phases": '
                '{"a": {"priority": -3, "run": 1}}}}}')
    assert err.field == "tasks.t.phases.a.priority"


def test_cpus_restored_when_the_task_loops():
    t = one_task('"phases": {"a": {"run": 1}, "b": {"cpus": [3], "run": 1}}')
    # a follows b on every loop after the first: it gets every CPU back
    assert events(t, 0)[0] == {"setattr": {"cpus": None}}
    assert events(t, 1)[0] == {"setattr": {"cpus": [3]}}
    once = one_task('"loop": 1, "phases": {"a": {"run": 1}, "b": {"cpus": [3], "run": 1}}')
    assert events(once, 0) == [{"run": 1000}]


def test_taskgroup_recorded():
    assert one_task('"taskgroup": "/fg", "run": 1')["taskgroup"] == "/fg"


# ----------------------------------------------------------------------- phase log

def test_phase_log_rows():
    doc = {"tasks": [
        {"name": "a-0", "phases": [
            {"phase": 0, "loops": 10, "activations": 10, "slack_us_min": 100.0,
             "slack_us_mean": 150.0, "wu_lat_us_max": 30.0, "wu_lat_us_mean": 12.5,
             "run_s": 0.03},
            {"phase": 1, "loops": 3, "activations": 0, "slack_us_min": None,
             "slack_us_mean": None, "wu_lat_us_max": None, "wu_lat_us_mean": None,
             "run_s": 0.01}]},
        {"name": "b-1"}]}
    rows = phase_log(doc)
    assert [(r["thread"], r["phase"], r["loops"]) for r in rows] == [("a-0", 0, 10), ("a-0", 1, 3)]
    assert list(rows[0]) == list(PHASE_LOG_COLUMNS)
    text = format_phase_log(rows)
    assert text.splitlines()[0].split() == list(PHASE_LOG_COLUMNS)
    assert len(text.splitlines()) == 3


# ======================================================== running them in the engine
# Each run is 1 simulated second; the assertions come from rt-app's semantics, not from
# the engine's own numbers.

from hetsched import Simulation  # noqa: E402

PLATFORMS = ["juno-r0", "gs101"]


def run(spec: dict, platform: str, seconds: float | None = 1.0) -> dict:
    return Simulation(platform=platform, workload=spec).run(seconds).doc


def by_name(doc: dict) -> dict[str, dict]:
    return {t["name"]: t for t in doc["tasks"]}


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("name", LOADS)
def test_real_file_runs(name, platform):
    spec = load_rtapp(REALDATA / name)
    doc = run(spec, platform)
    assert doc["sim_duration_s"] == pytest.approx(1.0)
    names = {t["name"] for t in doc["tasks"]}
    assert {t["name"] for t in spec["tasks"]} <= names
    assert sum(t["runtime_s"] for t in doc["tasks"]) > 0.01


@pytest.mark.parametrize("platform", PLATFORMS)
def test_example4_threads_alternate(platform):
    doc = run(load_rtapp(REALDATA / "rtapp_example4.json"), platform)
    t0, t1 = doc["tasks"]
    # ping-pong: both start with their 10 ms run; after that never both running (each
    # resume finds the other suspended), so together they use at most the wall time and
    # that first run of the second one, and each gets about half; each wakes the other
    # once per turn
    assert t0["runtime_s"] + t1["runtime_s"] <= 1.0 + 0.010 + 1e-6
    for t in (t0, t1):
        assert 0.4 < t["runtime_s"] < 0.55
    assert t0["nr_wakeups"] >= 15 and abs(t0["nr_wakeups"] - t1["nr_wakeups"]) <= 1


@pytest.mark.parametrize("platform", PLATFORMS)
def test_example7_threads_leave_each_barrier_together(platform):
    spec = load_rtapp(REALDATA / "rtapp_example7.json")
    names = ["FIRST", "SECOND", "THIRD"]
    spec["marks"] = [f"{n}.arrive" for n in names] + [f"{n}.leave" for n in names]
    for t in spec["tasks"]:
        evs = []
        for e in t["phases"][0]["events"]:
            if "barrier" in e:
                evs += [{"mark": e["barrier"]}, e, {"mark": 3 + e["barrier"]}]
            else:
                evs.append(e)
        t["phases"][0]["events"] = evs
    doc = run(spec, platform)
    marks = doc["marks"]
    for b in range(3):
        arrive = [[t for t, ti, m in marks if m == b and ti == k] for k in (0, 1)]
        leave = [[t for t, ti, m in marks if m == 3 + b and ti == k] for k in (0, 1)]
        n = min(len(leave[0]), len(leave[1]))
        assert n >= 50          # a 6 ms round: ~160 crossings in 1 s
        for i in range(n):
            last_arrival = max(arrive[0][i], arrive[1][i])
            # nobody leaves before the last one has arrived ...
            assert min(leave[0][i], leave[1][i]) >= last_arrival
            # ... and both leave then, give or take a wake-up from idle (< 2 ms)
            assert max(leave[0][i], leave[1][i]) - last_arrival < 2 * MS
        # and the designed waits are there: in FIRST task1 waits ~1 ms for task0
        if b == 0:
            waits = [leave[1][i] - arrive[1][i] for i in range(n)]
            assert sorted(waits)[n // 2] > 0.3 * MS


def critical_section_spec(with_lock: bool) -> str:
    lock = '"lock": "m", ' if with_lock else ""
    unlock = '"unlock": "m", ' if with_lock else ""
    body = (f'{{"loop": -1, {lock}"run": 2000, {unlock}"sleep": 1000}}')
    return f'{{"tasks": {{"a": {body}, "b": {body}}}, "global": {{"duration": 1}}}}'


def critical_intervals(spec: dict, platform: str) -> list[list[tuple[int, int]]]:
    """Mark entry and exit of each task's run; returns (start, end) per task."""
    spec["marks"] = ["in", "out"]
    for t in spec["tasks"]:
        evs = t["phases"][0]["events"]
        i = next(i for i, e in enumerate(evs) if "run" in e)
        t["phases"][0]["events"] = evs[:i] + [{"mark": 0}, evs[i], {"mark": 1}] + evs[i + 1:]
    doc = run(spec, platform)
    out = []
    for k in range(2):
        ins = [t for t, ti, m in doc["marks"] if ti == k and m == 0]
        outs = [t for t, ti, m in doc["marks"] if ti == k and m == 1]
        out.append(list(zip(ins, outs)))
    return out


def overlaps(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    return sum(1 for s1, e1 in a for s2, e2 in b if s1 < e2 and s2 < e1)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_lock_gives_mutual_exclusion(platform):
    a, b = critical_intervals(load(critical_section_spec(True)), platform)
    assert len(a) >= 50 and len(b) >= 50
    assert overlaps(a, b) == 0
    # the same tasks without the lock do run their sections in parallel
    a, b = critical_intervals(load(critical_section_spec(False)), platform)
    assert overlaps(a, b) > 10


@pytest.mark.parametrize("platform", PLATFORMS)
def test_semaphore_counts_posts(platform):
    # the producer posts 3 per 10 ms period, the consumer takes them one at a time: the
    # semaphore remembers, so the consumer runs 3 loops per period (~300 in 1 s)
    spec = load('''{"tasks": {
        "prod": {"run": 500, "sem_post": "s", "sem_post1": "s", "sem_post2": "s",
                 "timer": {"ref": "unique", "period": 10000}},
        "cons": {"sem_wait": "s", "run": 300}}, "global": {"duration": 1}}''')
    doc = by_name(run(spec, platform))
    prod = doc["prod-0"]["phases"][0]["loops"]
    cons = doc["cons-1"]["phases"][0]["loops"]
    assert 95 <= prod <= 101
    # (loops counts completed loops: the producer's last one has posted and waits for
    # its timer at the end of the run)
    assert 3 * prod - 3 <= cons <= 3 * (prod + 1)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_example9_forks_run_under_rt_app_names(platform):
    doc = by_name(run(load_rtapp(REALDATA / "rtapp_example9.json"), platform))
    # thread3 forks thread1 then thread2 once each (task loop 1)
    assert doc["thread1-2-0000"]["runtime_s"] > 0.1
    assert doc["thread2-3-0000"]["runtime_s"] > 0.1
    assert not [n for n in doc if n.endswith("-0001")]
    assert doc["thread1-2"]["runtime_s"] == doc["thread2-3"]["runtime_s"] == 0


def test_browser_subs_wait_on_their_own_keys_forever():
    # "suspend": "BrowserSub" waits on BrowserSub1/BrowserSub2, which nobody resumes
    doc = by_name(run(load_rtapp(REALDATA / "rtapp_browser-short.json"), "gs101", 2.0))
    # no work: their only CPU time is the modelled switch into them before they block
    assert doc["BrowserSub1-1"]["runtime_s"] < 5e-5 and doc["BrowserSub2-2"]["runtime_s"] < 5e-5
    assert doc["BrowserMain-0"]["runtime_s"] > 0.1


@pytest.mark.parametrize("platform", PLATFORMS)
def test_phase_log_of_example3(platform):
    # 12 threads, 10 light (3/30 ms) then 10 heavy (27/30 ms) periods, then they end
    doc = run(load_rtapp(REALDATA / "rtapp_example3.json"), platform, seconds=None)
    rows = phase_log(doc)
    assert len(rows) == 24
    for thread in (f"thread0-{i}" for i in range(12)):
        light, heavy = [r for r in rows if r["thread"] == thread]
        assert (light["phase"], heavy["phase"]) == (0, 1)
        assert light["loops"] == heavy["loops"] == 10
        assert light["activations"] == heavy["activations"] == 10
        # more work before the same timer: less slack
        assert light["slack_us_mean"] > heavy["slack_us_mean"]
        assert light["slack_us_min"] <= light["slack_us_mean"]
        assert light["run_s"] < heavy["run_s"]
    # the light phase has ~27 ms of slack per period on a big core at f_max
    assert max(r["slack_us_mean"] for r in rows if r["phase"] == 0) < 27_000 + 1


@pytest.mark.parametrize("platform", PLATFORMS)
def test_phase_cpus_move_the_task(platform):
    doc = run(load_rtapp(REALDATA / "rtapp_example8.json"), platform)
    (t,) = doc["tasks"]
    # phases on CPU0, CPU1, CPU2 in turn: time on exactly those three
    assert set(t["cpu_time_s"]) == {"0", "1", "2"}
    # each move evaluates the shared policy at the detach, when neither CPU carries the
    # task, and the attach's update falls within schedutil's rate limit: the frequency
    # stays low until the next tick, so fewer loops than at f_max (1 s / 28.8 ms = 34 on
    # gs101's little CPUs, 4.5 ms of invariant work at capacity 160 per loop)
    assert [p["loops"] for p in t["phases"]][0] >= 15
