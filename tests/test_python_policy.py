"""Scheduler policies written in Python (python/hetsched/policy.py, crates/hetsched-py/src/policy.rs).

A subclass that defines no hook is its base, to the byte; the hooks it defines are the
only ones called; a hook that raises or returns a CPU the task may not run on stops the
run with a PolicyError naming the policy and the hook; a view does not outlive its call;
the CLI runs ``FILE.py:CLASS``; the worked example prints what docs/examples keeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import hetsched
from hetsched import Policy, PolicyError, Simulation
from hetsched.errors import InputError, UnknownNameError
from hetsched.platforms import load_platform
from hetsched.workloads.builtin import resolve_workloads

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "examples" / "python_policy.py"


def doc_of(scheduler, platform="gs101", workload="game", duration=1.0, **kw) -> dict:
    sim = Simulation(platform=platform, workload=workload, scheduler=scheduler, seed=1, lower_bound=False, **kw)
    d = dict(sim.run(duration).doc)
    d.pop("wall_s")
    return d


def without(d: dict, *keys: str) -> str:
    return json.dumps({k: v for k, v in d.items() if k not in keys}, indent=1)


def spec_with(platform: str, workload: str, **task0) -> dict:
    """A built-in workload's resolved spec, its tasks changed as ``task0`` says (all of
    them for ``cpus``, the first for anything else)."""
    spec = resolve_workloads([workload], load_platform(platform).to_spec(), 1)
    for i, t in enumerate(spec["tasks"]):
        if "cpus" in task0:
            t["cpus"] = task0["cpus"]
        if i == 0:
            t.update({k: v for k, v in task0.items() if k != "cpus"})
    return spec


# ------------------------------------------------------------------ the base, unchanged

@pytest.mark.parametrize("base,platform,workload", [
    ("cfs", "gs101", "phone-mix"),
    ("eas", "gs101", "game"),
    ("gts", "sm8150", "periodic"),
    ("hcs-td", "hikey960", "hackbench:groups=2,loops=40"),
])
def test_a_policy_that_defines_nothing_is_its_base_to_the_byte(base, platform, workload):
    class Nothing(Policy):
        name = "nothing"

    Nothing.base = base
    want = doc_of(base, platform, workload)
    got = doc_of(Nothing(), platform, workload)
    assert got["scheduler"] == "nothing" and want["scheduler"] == base
    assert without(got, "scheduler") == without(want, "scheduler")


def test_a_select_task_rq_that_leaves_every_wakeup_to_the_base_changes_only_the_names():
    class Ask(Policy):
        name = "ask"
        base = "eas"

        def __init__(self):
            self.calls = 0

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            self.calls += 1
            assert wake_flags in (Policy.WF_FORK, Policy.WF_TTWU)
            return None

    p = Ask()
    got = doc_of(p)
    want = doc_of("eas")
    assert p.calls > 100
    assert got["policy"]["placement"] == "ask (Python), else eas"
    assert without(got, "scheduler", "policy") == without(want, "scheduler", "policy")


def test_same_inputs_same_bytes():
    from importlib import util

    spec = util.spec_from_file_location("python_policy_example", EXAMPLE)
    mod = util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = doc_of(mod.SmallestIdleFit(), workload="video:seconds=2", duration=2.0)
    b = doc_of(mod.SmallestIdleFit, workload="video:seconds=2", duration=2.0)
    assert json.dumps(a) == json.dumps(b)
    assert a["counters"]["policy"]["python_placed"] > 0 and a != doc_of("cfs", workload="video:seconds=2", duration=2.0)


# ------------------------------------------------------------------ the hooks

def test_a_placement_lands_where_the_policy_says():
    class Littlest(Policy):
        name = "littlest"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            return view.cpus_allowed(task)[0]

    d = doc_of(Littlest, workload="periodic", duration=1.0)
    busy = {c["cpu"]: c["busy_s"] for c in d["cpus"]}
    # every wakeup lands on CPU 0; the balancer spreads some of the work between wakeups,
    # so CPU 0 carries the most of it rather than all
    assert busy[0] == max(busy.values()) and busy[0] > 0


def test_rt_tasks_are_placed_by_their_class_not_by_the_python_hook():
    seen = set()

    class Watch(Policy):
        name = "watch"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            seen.add(task)
            return None

    spec = spec_with("gs101", "periodic", policy="fifo", rt_priority=10)
    doc_of(Watch, workload=spec)
    assert seen and 0 not in seen


def test_the_view_offers_the_engine_state():
    got = {}
    platform = load_platform("gs101")
    caps = {cpu: c.capacity_orig for c in platform.clusters for cpu in c.cpus}

    class Look(Policy):
        name = "look"
        base = "eas"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            n = view.nr_cpus
            got.setdefault("em", set()).add(id(view.energy_model))
            got.setdefault("pd", set()).add(id(view.perf_domains))
            got["now"] = max(got.get("now", 0), view.now_ns)
            got["caps"] = {c: view.capacity_orig(c) for c in range(n)}
            got["cap_of_le_orig"] = all(view.capacity_of(c) <= view.capacity_orig(c) for c in range(n))
            got["util_capped"] = all(0 <= view.cpu_util(c) <= view.capacity_orig(c) for c in range(n))
            got["freq"] = all(view.cpu_freq_khz(c) > 0 for c in range(n))
            got["idle"] = [view.idle_cpu(c) for c in range(n)]
            got["nr_running"] = [view.nr_running(c) for c in range(n)]
            got["task"] = (view.task_util(task), view.cpus_allowed(task), view.task_cpu(task) == prev_cpu,
                           view.task_name(task), view.nr_tasks, view.overutilized,
                           [view.cpu_overutilized(c) for c in range(n)])
            # the waking task is on no runqueue yet; the task a CPU runs is on its runqueue
            got["waking"] = (view.task_on_rq(task), view.task_policy(task))
            got.setdefault("curr", []).append(all((view.cpu_curr(c) is None) or view.task_on_rq(view.cpu_curr(c))
                                                  for c in range(n)))
            got["domains"] = view.perf_domains
            got["energy"] = view.energy_model.compute_energy([view.cpu_util(c) for c in range(n)])
            return None

    doc_of(Look, workload="game", duration=0.5)
    assert len(got["em"]) == 1 and len(got["pd"]) == 1  # built once per simulation
    assert got["caps"] == caps
    assert got["cap_of_le_orig"] and got["util_capped"] and got["freq"]
    assert 0 < got["now"] < 0.5e9
    util, allowed, on_prev, tname, nr_tasks, _, _ = got["task"]
    assert 0 <= util <= 1024 and allowed == list(range(8)) and on_prev and tname and nr_tasks > 0
    assert got["waking"] == (False, "other") and all(got["curr"])
    domains = got["domains"]
    # rd->pd order, as the Energy Model has them (the kernel prepends each new domain)
    em = hetsched.EnergyModel.from_platform("gs101")
    assert [d.cpus for d in domains] == [tuple(d["cpus"]) for d in em.domains()]
    assert {d.name: d.cpus for d in domains} == {c.name: tuple(c.cpus) for c in platform.clusters}
    assert all(d.capacity == caps[d.cpus[0]] for d in domains)
    assert all(d.states and d.states[-1].performance == d.capacity for d in domains)
    assert isinstance(got["energy"], int)


def test_a_view_refuses_access_after_its_call():
    kept = []

    class Keep(Policy):
        name = "keep"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            kept.append(view)
            return None

    doc_of(Keep, duration=0.2)
    assert kept and "expired" in repr(kept[0])
    with pytest.raises(RuntimeError, match="policy 'keep': this SchedView was handed to select_task_rq"):
        kept[0].idle_cpu(0)
    with pytest.raises(RuntimeError, match="valid only during its hook call"):
        kept[-1].energy_model


def test_a_view_refuses_a_cpu_or_task_that_does_not_exist():
    class Probe(Policy):
        name = "probe"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            view.capacity_orig(view.nr_cpus)

    with pytest.raises(PolicyError, match=r"select_task_rq raised IndexError: cpu 8: gs101 has CPUs 0-7"):
        doc_of(Probe, duration=0.2)


def test_task_tick_migrations_are_carried_out():
    class UpMigrate(Policy):
        """On a little CPU's tick, push its running task to the first idle big CPU."""

        name = "up-migrate"

        def __init__(self):
            self.asked = 0

        def task_tick(self, view, cpu, curr):
            big = [c for c in view.cpus_allowed(curr) if view.capacity_orig(c) == 1024 and view.idle_cpu(c)]
            if view.capacity_orig(cpu) < 1024 and big:
                self.asked += 1
                return [(curr, big[0])]
            return None

        def counters(self):
            return {"up_migrations_asked": self.asked}

    base = doc_of("cfs", workload="periodic", duration=1.0)
    got = doc_of(UpMigrate(), workload="periodic", duration=1.0)
    assert got["counters"]["policy"]["up_migrations_asked"] > 0
    assert got["counters"]["migrations"] > base["counters"]["migrations"]
    big = [c["cpu"] for c in got["cpus"] if c["capacity"] == 1024]
    assert sum(c["busy_s"] for c in got["cpus"] if c["cpu"] in big) > \
        sum(c["busy_s"] for c in base["cpus"] if c["cpu"] in big)


def test_balance_migrations_are_carried_out():
    class PullToSeven(Policy):
        """Once per tick, while CPU 7 is idle, the first fair task on a runqueue elsewhere
        goes there."""

        name = "pull-to-seven"

        def __init__(self):
            self.asked = self.checked = self.landed = 0
            self.last = None

        def balance(self, view):
            if self.last is not None:
                self.checked += 1
                self.landed += view.task_cpu(self.last) == 7
                self.last = None
            if not view.idle_cpu(7):
                return None
            for t in range(view.nr_tasks):
                if view.task_on_rq(t) and view.task_policy(t) == "other" and view.task_cpu(t) != 7:
                    self.asked += 1
                    self.last = t
                    return [(t, 7)]
            return None

    base = doc_of("cfs", workload="periodic", duration=1.0)
    p = PullToSeven()
    got = doc_of(p, workload="periodic", duration=1.0)
    assert p.asked > 0 and got["counters"]["migrations"] > base["counters"]["migrations"]
    # at the next tick the task moved is on CPU 7, unless it slept there in between and its
    # wakeup (or the balancer) placed it elsewhere: a few of them
    assert p.checked >= p.asked - 1 and p.landed >= 3 * p.checked // 4, (p.asked, p.checked, p.landed)


def test_counters_appear_beside_the_base_policys_and_may_not_take_their_names():
    class Count(Policy):
        name = "count"
        base = "eas"

        def counters(self):
            return {"py_int": 3, "py_float": 0.5, "py_flag": True}

    c = doc_of(Count, duration=0.2)["counters"]["policy"]
    assert (c["py_int"], c["py_float"], c["py_flag"]) == (3, 0.5, True)
    assert "feec_calls" in c  # the base's, beside them

    class Clash(Policy):
        name = "clash"
        base = "eas"

        def counters(self):
            return {"feec_calls": 1}

    with pytest.raises(PolicyError, match=r"policy 'clash' \(test_python_policy.py:Clash\): counters returned the "
                                          r"counter 'feec_calls'"):
        doc_of(Clash, duration=0.2)


# ------------------------------------------------------------------ errors

class Stray(Policy):
    """Places every task on the last CPU, whatever its affinity."""

    name = "stray"

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        return view.nr_cpus - 1


def test_a_cpu_outside_the_tasks_affinity_is_an_error_naming_policy_hook_cpu_and_allowed_cpus():
    spec = spec_with("gs101", "periodic", cpus=[0, 1, 2, 3])
    sim = Simulation(platform="gs101", workload=spec, scheduler=Stray(), seed=1, lower_bound=False)
    with pytest.raises(PolicyError) as e:
        sim.run(0.5)
    msg = str(e.value)
    assert msg.startswith("policy 'stray' (test_python_policy.py:Stray): select_task_rq returned CPU 7 for task ")
    assert msg.endswith("outside its allowed CPUs [0, 1, 2, 3]")
    assert (e.value.policy, e.value.hook) == ("stray", "select_task_rq")


@pytest.mark.parametrize("ret,needle", [
    ("2", "returned '2' (str) for task"),
    (2.0, "returned 2.0 (float) for task"),
    (True, "returned True (bool) for task"),
    (-1, "returned CPU -1 for task"),
    (99, "returned CPU 99 for task"),
])
def test_a_return_that_is_not_a_cpu_is_an_error(ret, needle):
    class Bad(Policy):
        name = "bad"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            return ret

    with pytest.raises(PolicyError, match=r"policy 'bad' \(test_python_policy.py:Bad\): select_task_rq ") as e:
        doc_of(Bad, duration=0.2)
    assert needle in str(e.value) and "allowed CPUs" in str(e.value)


def test_a_task_tick_migration_outside_the_affinity_is_an_error():
    class StrayTick(Policy):
        name = "stray-tick"

        def task_tick(self, view, cpu, curr):
            return [(curr, view.nr_cpus - 1)]

    spec = spec_with("gs101", "periodic", cpus=[0, 1, 2, 3])
    with pytest.raises(PolicyError, match=r"policy 'stray-tick' \(test_python_policy.py:StrayTick\): task_tick "
                                          r"returned the migration \(\d+, 7\) "
                                          r"\(tuple\): CPU 7 for task \d+ \(.*\), outside its allowed CPUs "
                                          r"\[0, 1, 2, 3\]"):
        doc_of(StrayTick, workload=spec, duration=0.5)


def test_an_exception_in_a_hook_stops_the_run_and_surfaces_with_its_cause():
    class Boom(Policy):
        name = "boom"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            if view.now_ns > 100_000_000:
                raise ZeroDivisionError("no CPU for you")
            return None

    sim = Simulation(platform="gs101", workload="game", scheduler=Boom(), seed=1, lower_bound=False)
    with pytest.raises(PolicyError) as e:
        sim.run(1.0)
    err = e.value
    assert str(err).startswith("policy 'boom' (test_python_policy.py:Boom): select_task_rq raised ZeroDivisionError: "
                               "no CPU for you "
                               "(at test_python_policy.py:")
    assert isinstance(err.__cause__, ZeroDivisionError) and err.__cause__.__traceback__ is not None
    assert 100_000_000 < sim.now_ns < 1_000_000_000  # stopped mid-run
    # the state is mid-event: the simulation refuses to go on, and says why
    for again in (lambda: sim.run(0.1), sim.result, sim.observe):
        with pytest.raises(PolicyError, match=r"policy 'boom' \(test_python_policy.py:Boom\): select_task_rq raised"):
            again()


def test_a_generator_of_migrations_that_raises_is_the_hooks_exception():
    class Gen(Policy):
        name = "gen"

        def task_tick(self, view, cpu, curr):
            yield (curr, cpu)
            raise LookupError("no such CPU")

    with pytest.raises(PolicyError, match=r"policy 'gen' \(test_python_policy.py:Gen\): task_tick raised "
                                          r"LookupError: no such CPU \(at "):
        doc_of(Gen, duration=0.2)


def test_keyboard_interrupt_in_a_hook_stays_a_keyboard_interrupt():
    class Interrupted(Policy):
        name = "interrupted"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        doc_of(Interrupted, duration=0.2)


# ------------------------------------------------------------------ validation

def test_the_base_must_be_a_registered_scheduler():
    class NoBase(Policy):
        name = "no-base"
        base = "cfss"

    with pytest.raises(UnknownNameError, match=r"NoBase: base: expected one of: .*did you mean 'cfs'"):
        Simulation(scheduler=NoBase())

    class ControllerBase(Policy):
        name = "controller-base"
        base = "learning-eas"  # a Python controller over eas, not an engine policy

    with pytest.raises(UnknownNameError, match="ControllerBase: base"):
        Simulation(scheduler=ControllerBase)


def test_names_and_instances():
    class Eas(Policy):
        name = "eas"

    with pytest.raises(InputError, match="Eas: name: expected a name of its own"):
        Simulation(scheduler=Eas)

    class Unnamed(Policy):
        pass

    assert doc_of(Unnamed, duration=0.1)["scheduler"] == "Unnamed"

    p = Unnamed()
    Simulation(scheduler=p, lower_bound=False)
    with pytest.raises(InputError, match="a policy instance of its own for each Simulation"):
        Simulation(scheduler=p)

    with pytest.raises(InputError, match="a scheduler name, or a hetsched.Policy"):
        Simulation(scheduler=42)


def test_a_hook_the_engine_would_not_call_is_refused():
    class Dead(Policy):
        name = "dead"

        def task_dead(self, task):
            pass

    with pytest.raises(InputError, match="Dead: task_dead: expected only the hooks a Python policy may define"):
        Simulation(scheduler=Dead)
    assert Stray().hooks() == ["select_task_rq"]

    # the engine's list of hooks is its trait's: result and needs_hmp_load too
    for hook in ("result", "needs_hmp_load", "take_placement_steps"):
        cls = type("Late", (Policy,), {"name": "late", hook: lambda self, *a: None})
        with pytest.raises(InputError, match=f"Late: {hook}: expected only the hooks a Python policy may define"):
            Simulation(scheduler=cls)


def test_a_near_miss_of_a_hook_is_refused():
    class Typo(Policy):
        name = "typo"

        def select_task_rq_fair(self, v, p, prev_cpu, wake_flags):
            return prev_cpu

    with pytest.raises(InputError, match="Typo: select_task_rq_fair: expected a hook's own name .* did you mean "
                                         "select_task_rq"):
        Simulation(scheduler=Typo)

    class Typo2(Policy):
        name = "typo2"

        def task_ticks(self, sim, cpu, curr):
            pass

    with pytest.raises(InputError, match="Typo2: task_ticks: .* did you mean task_tick"):
        Simulation(scheduler=Typo2)

    class Helper(Policy):
        """A helper method of its own name (not a hook's) is the class's business."""
        name = "helper"

        def pick_idlest(self, v):
            return 0

    Simulation(scheduler=Helper, lower_bound=False)


def test_the_hook_lists_are_the_engines():
    from hetsched import _engine
    from hetsched.policy import _ENGINE_ONLY_HOOKS, HOOKS

    assert HOOKS == ("select_task_rq", "task_tick", "balance", "counters") == tuple(_engine.POLICY_HOOKS)
    assert set(HOOKS) | set(_ENGINE_ONLY_HOOKS) == set(_engine.ENGINE_HOOKS)
    assert {"result", "needs_hmp_load", "migrate_task_rq", "task_dead"} <= set(_ENGINE_ONLY_HOOKS)


# ------------------------------------------------------------------ the worked example and the CLI

def test_the_worked_example_prints_what_docs_examples_keeps(tools):
    import os

    env = {**os.environ, "PYTHONPATH": str(Path(hetsched.__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == EXAMPLE.with_suffix(".out").read_text()


POLICY_FILE = '''
import hetsched


class Mine(hetsched.Policy):
    name = "mine"
    base = "eas"

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        return None


class Boom(hetsched.Policy):
    name = "boom"

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        raise ValueError("bad\\nplacement")


def helper():
    pass
'''


def test_cli_runs_a_policy_file(tools, tmp_path):
    (tmp_path / "mine.py").write_text(POLICY_FILE)
    (tmp_path / "broken.py").write_text("import hetsched\nx = undefined_name\n")
    common = ["--platform", "gs101", "--workload", "game", "--duration", "0.5", "--seed", "1"]
    jobs = {
        "ok": ["run", *common, "--scheduler", "mine.py:Mine", "--out", str(tmp_path / "ok")],
        "base": ["run", *common, "--scheduler", "eas", "--out", str(tmp_path / "base")],
        "no-file": ["run", *common, "--scheduler", "nope.py:Mine", "--out", str(tmp_path / "e1")],
        "no-class": ["run", *common, "--scheduler", "mine.py:Nope", "--out", str(tmp_path / "e2")],
        "not-policy": ["run", *common, "--scheduler", "mine.py:helper", "--out", str(tmp_path / "e3")],
        "broken": ["run", *common, "--scheduler", "broken.py:X", "--out", str(tmp_path / "e4")],
        "raises": ["run", *common, "--scheduler", "mine.py:Boom", "--out", str(tmp_path / "e5")],
        "compare": ["compare", "--platform", "gs101", "--workload", "game", "--duration", "0.3", "--seeds", "1",
                    "--scheduler", "eas", "--scheduler", "mine.py:Mine"],
    }
    procs = tools.run_cli_many(jobs, cwd=tmp_path, workers=2)
    assert procs["ok"].returncode == 0, procs["ok"].stderr
    got = json.loads((tmp_path / "ok" / "result.json").read_text())
    want = json.loads((tmp_path / "base" / "result.json").read_text())
    assert got["scheduler"] == "mine" and "mine/schedutil" in procs["ok"].stdout
    assert got["energy_j"] == want["energy_j"]
    tools.assert_one_line_error(procs["no-file"], "--scheduler: nope.py: expected an existing Python file")
    tools.assert_one_line_error(procs["no-class"], "mine.py:Nope: expected a class Nope in mine.py",
                                "Boom, Mine")
    tools.assert_one_line_error(procs["not-policy"], "expected a subclass of hetsched.Policy",
                                "got 'function helper'")
    tools.assert_one_line_error(procs["broken"], "broken.py: expected a Python file that loads",
                                "NameError", "(line 2)")
    tools.assert_one_line_error(procs["raises"], "policy 'boom' (mine.py:Boom): select_task_rq raised ValueError: bad",
                                "(at mine.py:")
    for name in ("e1", "e2", "e3", "e4", "e5"):
        tools.assert_no_outputs(tmp_path / name)
    assert procs["compare"].returncode == 0, procs["compare"].stderr
    assert "mine.py:Mine/schedutil" in procs["compare"].stdout
