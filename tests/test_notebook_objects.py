"""What a notebook shows of hetsched's objects: short reprs, HTML tables, and pandas
frames that keep every per-CPU, per-cluster and per-task figure of result.json."""

import math

import pytest

from hetsched import EnergyModel, Simulation

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def results():
    return [Simulation(platform="gs101", workload="phone-mix", seed=1).run(0.5),
            Simulation(platform="juno-r0", workload=["phone-mix", "periodic:n=4"], scheduler="eas", seed=4,
                       timeseries=True, knobs={"timeseries.period_us": 10_000}).run(0.3)]


def _leaves(tree, path=()):
    """(path, value) of every number in a document subtree, read straight from the JSON."""
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _leaves(v, path + (k,))
    elif isinstance(tree, list):
        for i, v in enumerate(tree):
            yield from _leaves(v, path + (i,))
    elif isinstance(tree, (int, float)) and not isinstance(tree, bool):
        yield path, tree


def _same(a, b):
    try:
        return a == b or float(a) == float(b)
    except (TypeError, ValueError):
        return False


def _found(frames, key_col, key, path, value):
    """The value is in a row of some frame keyed by ``key_col == key``, in the field's own
    column or in a frame named after the field, with every key on the way (a frequency,
    an idle state, a CPU, a phase) a value of the same row."""
    field, rest = path[0], path[1:]
    for name, df in frames.items():
        if key_col not in df.columns or not (field in df.columns or field.removesuffix("_s") == name
                                             or field == name):
            continue
        for row in df[df[key_col] == key].to_dict("records"):
            if not rest:
                if field in row and _same(row[field], value):
                    return True
                continue
            if isinstance(row.get(field), list) and len(rest) == 1 and value in row[field]:
                return True  # a list of numbers kept whole (a cluster's cpus)
            leaf = rest[-1]
            if isinstance(leaf, str) and leaf in row and _same(row[leaf], value):
                keys = rest[:-1]
            elif any(_same(v, value) for v in row.values()):
                keys = rest
            else:
                continue
            if all(any(str(v) == str(k) for v in row.values()) for k in keys):
                return True
    return False


def test_to_pandas_loses_no_per_cpu_cluster_or_task_figure(results):
    for res in results:
        frames = res.to_pandas()
        missing = []
        for section, key_col in (("cpus", "cpu"), ("clusters", "cluster"), ("tasks", "pid")):
            for entry in res.doc[section]:
                for path, value in _leaves(entry):
                    if path == (key_col,):
                        continue
                    if not _found(frames, key_col, entry[key_col], path, value):
                        missing.append((section, entry[key_col], path, value))
        assert not missing, missing[:10]


def test_residency_frames_add_up(results):
    res = results[0]
    f = res.to_pandas()
    # each CPU's residencies cover the run: busy time at some frequency, the rest idle
    busy = f["freq_residency"].groupby("cpu")["seconds"].sum()
    idle = f["idle_residency"].groupby("cpu")["seconds"].sum()
    for c in res.doc["cpus"]:
        assert busy[c["cpu"]] == pytest.approx(c["busy_s"], abs=1e-9)
        assert busy[c["cpu"]] + idle[c["cpu"]] == pytest.approx(res.doc["sim_duration_s"], abs=1e-9)
    assert set(f["freq_residency"]["khz"].map(type)) == {int}
    runtime = f["cpu_time"].groupby("pid")["seconds"].sum()
    for t in res.doc["tasks"]:
        if t["runtime_s"]:
            assert runtime[t["pid"]] == pytest.approx(t["runtime_s"], abs=1e-9)


def test_metrics_and_counters_frames_name_every_figure(results):
    res = results[0]
    f = res.to_pandas()
    metrics = dict(zip(f["metrics"]["name"], f["metrics"]["value"]))
    assert metrics["wakeup_latency_us_p99"] == res.metrics["wakeup_latency_us_p99"]
    counters = dict(zip(f["counters"]["name"], f["counters"]["value"]))
    assert counters["context_switches"] == res.doc["counters"]["context_switches"]
    mc = res.doc["counters"]["balance_domains"]["MC"]["attempts"]
    assert counters["balance_domains.MC.attempts"] == mc


def test_reprs_are_one_short_line(results):
    res = results[1]
    text = repr(res)
    assert len(text) < 200 and "\n" not in text
    for part in ("juno-r0", "eas", "schedutil", "0.3 s", "J", "mW"):
        assert part in text
    sim = Simulation(platform="gs101", workload="phone-mix")
    assert repr(sim) == ("Simulation(platform='gs101', workload='phone-mix:load=1.0', scheduler='cfs', "
                         "governor='schedutil', now=0 s)")
    sim.run(0.25)
    assert repr(sim).endswith("now=0.25 s)")
    em = EnergyModel.from_platform("gs101", kernel="android-4.19")
    assert repr(em) == ("EnergyModel(platform='gs101', kernel='android-4.19', 3 perf domains, "
                        f"{sum(len(d['states']) for d in em.domains())} performance states, 8 CPUs)")
    assert "platform=None" in repr(EnergyModel.from_table([{"cpus": [0], "opps": [(1024, 500)]}]))


def test_html_escapes_what_it_shows(results):
    res = results[0]
    html = res._repr_html_()
    assert html.startswith("<table>") and "gs101" in html and f"{res.energy_j:.4g} J" in html
    doc = dict(res.doc, workload="<script>alert(1)</script>&")
    shown = type(res)(doc=doc)._repr_html_()
    assert "<script>" not in shown and "&lt;script&gt;" in shown and "&amp;" in shown
    em = EnergyModel.from_platform("gs101")._repr_html_()
    assert em.count("<tr>") == 1 + 3 and "0 1 2 3" in em


def test_public_members_have_docstrings():
    from hetsched.sim import Result

    for cls in (Simulation, Result, EnergyModel):
        bare = [n for n, v in vars(cls).items() if not n.startswith("_") and callable(getattr(v, "__func__", v))
                and not (getattr(v, "__doc__", None) or getattr(getattr(v, "fget", None), "__doc__", None))]
        bare += [n for n, v in vars(cls).items() if isinstance(v, property) and not n.startswith("_")
                 and not v.__doc__]
        assert not bare, (cls.__name__, bare)


def test_time_in_state_is_the_clusters_wall_time_per_frequency(results):
    """cpufreq_stats counts a policy's time at each frequency whether its CPUs run or
    sleep: per cluster the rows add up to the run's length, and each is at least the busy
    time of any of its CPUs at that frequency; the kernel's column is in 10 ms ticks."""
    for res in results:
        f = res.to_pandas()
        tis = f["time_in_state"]
        for cluster, rows in tis.groupby("cluster"):
            assert rows["seconds"].sum() == pytest.approx(res.doc["sim_duration_s"], abs=1e-9)
            busy = f["freq_residency"][f["freq_residency"]["cluster"] == cluster]
            for khz, s in zip(rows["khz"], rows["seconds"]):
                assert (busy[busy["khz"] == khz]["seconds"] <= s + 1e-12).all()
        assert (tis["time_in_state"] == (tis["seconds"] * 1e9).round().astype(int) // 10_000_000).all()


def test_the_rest_of_the_document_is_the_run_frame(results):
    res = results[1]
    run = res.to_pandas()["run"]
    names = dict(zip(run["name"], run["value"]))
    d = res.doc
    for key in ("platform", "scheduler", "governor", "sim_duration_s", "energy_j", "energy_lower_bound_j",
                "events", "seed"):
        assert names[key] == d[key]
    assert names["events_by_class.tick"] == d["events_by_class"]["tick"]
    assert names["eas.enabled"] == d["eas"]["enabled"]
    for k, v in d["knobs"].items():
        assert names[f"knobs.{k}"] == v


def test_events_frame_from_the_runs_ftrace_text(tmp_path):
    sim = Simulation(platform="gs101", workload="phone-mix", scheduler="eas", trace="ftrace", lower_bound=False)
    res = sim.run(0.2)
    text = sim.take_trace()
    ev = res.to_pandas(trace=text)["events"]
    lines = text.splitlines()[2:]
    assert len(ev) == len(lines)
    counts = ev["event"].value_counts()
    for name in ("sched_switch", "sched_waking", "cpu_idle", "cpu_frequency"):
        assert counts[name] == sum(f": {name}: " in ln for ln in lines)
    sw = ev[ev["event"] == "sched_switch"]
    assert set(sw["prev_state"]) <= {"R", "R+", "S", "D", "Z"}
    assert (sw["pid"] == sw["prev_pid"]).all()
    # the switches a task made in are its wakeups and preemptions; pids are result.json's + 999
    assert set(sw["next_pid"]) - {0} <= {t["pid"] + 999 for t in res.doc["tasks"]}
    assert ev["ts_ns"].is_monotonic_increasing and ev["ts_ns"].iloc[-1] <= 200_000_000
    path = tmp_path / "trace.txt"
    path.write_text(text)
    assert res.to_pandas(trace=path)["events"].equals(ev)
    (tmp_path / "bad.txt").write_text("version = 6\ncpus=8\nnot an event\n")
    from hetsched.errors import InputError

    with pytest.raises(InputError, match="bad.txt: line 3"):
        res.to_pandas(trace=tmp_path / "bad.txt")
