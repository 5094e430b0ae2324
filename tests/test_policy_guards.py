"""A Python policy that misbehaves is stopped in one line (python/hetsched/policy.py,
crates/hetsched-py/src/policy.rs; docs/python-policies.md, docs/robustness.md).

What a hook returns is read for a bounded number of items, so an endless or huge iterator
ends the run with a PolicyError instead of hanging; whatever a policy's file, constructor,
``name`` or hook raises (sys.exit() and KeyboardInterrupt too) is reported naming the
file, the class and the field or hook; a method named as a hook the engine never calls
from Python, or one edit away from a hook, is refused with the nearest hook; a view
refuses use from another thread with a Python exception; a name is at most MAX_NAME_LEN
printable characters; a simulation interrupted inside a hook says so afterwards; an
instance a Simulation refused stays free for the next.

Ctrl-C and SIGTERM inside an endless hook are in tests/test_signals.py.
"""

from __future__ import annotations

import gc
import itertools
import signal
import threading
import warnings
from pathlib import Path

import pytest

from hetsched import Policy, PolicyError, Simulation, _engine
from hetsched.errors import InputError, UnknownNameError
from hetsched.policy import _ENGINE_ONLY_HOOKS, HOOKS, MAX_HOOK_ITEMS, MAX_NAME_LEN, load_policy

MAX_ITEMS = MAX_HOOK_ITEMS
HERE = Path(__file__).name


def sim_of(scheduler, **kw) -> Simulation:
    return Simulation(platform="gs101", workload="periodic", scheduler=scheduler, seed=1, lower_bound=False, **kw)


# ------------------------------------------------------------------ what a hook returns, bounded

def test_the_bound_is_the_engines_task_limit():
    assert MAX_ITEMS == _engine.MAX_HOOK_ITEMS == _engine.MAX_TASKS == 32_768


@pytest.mark.parametrize("hook", ["task_tick", "balance"])
@pytest.mark.parametrize("endless", ["itertools.repeat", "generator"])
def test_an_endless_iterator_of_migrations_is_refused(hook, endless):
    # itertools.repeat loops in C: before the bound, the run never ended (Ctrl-C could not
    # stop it either) and its list grew until the memory ran out
    def moves(*args):
        if endless == "generator":
            return (m for m in itertools.repeat((0, 1)))
        return itertools.repeat((0, 1))

    cls = type("Endless", (Policy,), {"name": "endless", hook: moves})
    with pytest.raises(PolicyError) as e:
        sim_of(cls).run(0.1)
    assert str(e.value) == (f"policy 'endless' ({HERE}:Endless): {hook} returned an iterator of more than "
                            f"{MAX_ITEMS} migrations (an endless one?); at most {MAX_ITEMS} are taken, the tasks "
                            "a run may hold (a tick moves each task once at most)")


def test_a_list_longer_than_the_bound_is_refused_unread():
    class Huge(Policy):
        name = "huge"

        def balance(self, view):
            return [("not", "read")] * (MAX_ITEMS + 1)

    with pytest.raises(PolicyError, match=rf"balance returned {MAX_ITEMS + 1} migrations; at most {MAX_ITEMS} "):
        sim_of(Huge).run(0.1)


def test_the_bound_itself_is_taken():
    class Full(Policy):
        name = "full"
        calls = 0

        def balance(self, view):
            self.calls += 1
            task = 0
            other = next(c for c in view.cpus_allowed(task) if c != view.task_cpu(task))
            return [(task, other)] * MAX_ITEMS if self.calls == 1 else None

    p = Full()
    sim_of(p).run(0.05)
    assert p.calls > 1


def test_more_counters_than_the_bound_are_refused():
    class Counting(Policy):
        name = "counting"

        def counters(self):
            return {f"c{i}": i for i in range(MAX_ITEMS + 1)}

    with pytest.raises(PolicyError, match=rf"counters returned {MAX_ITEMS + 1} counters, more than {MAX_ITEMS}"):
        sim_of(Counting).run(0.01)


# ------------------------------------------------------------------ making and asking the class

def test_a_class_that_cannot_be_made_is_an_input_error_naming_it():
    class NeedsArgs(Policy):
        def __init__(self, x):
            pass

    with pytest.raises(InputError, match=rf"^{HERE}:NeedsArgs: __init__: expected a class that needs no arguments "
                                         r"to make \(or pass an instance\); NeedsArgs\(\) raised TypeError: "):
        sim_of(NeedsArgs)

    class InitRaises(Policy):
        def __init__(self):
            raise KeyboardInterrupt  # its own: no signal arrived

    with pytest.raises(InputError, match=r"InitRaises: __init__: .*InitRaises\(\) raised KeyboardInterrupt "
                                         rf"\(at {HERE}:\d+\)$"):
        sim_of(InitRaises)


@pytest.mark.parametrize("attr", ["name", "base"])
def test_a_name_or_base_that_raises_is_an_input_error(attr):
    def boom(self):
        raise RuntimeError("not today")

    cls = type("Prop", (Policy,), {attr: property(boom)})
    for given in (cls, cls()):
        with pytest.raises(InputError, match=rf"Prop: {attr}: expected a {attr} that can be read; reading it raised "
                                             r"RuntimeError: not today \(at "):
            sim_of(given)
    assert repr(cls()) == "<Prop>"  # a repr never raises


def test_a_metaclass_does_not_hide_a_hook():
    """The engine calls a hook as Python calls a method (``policy.balance(view)``), which a
    metaclass's ``__getattribute__`` plays no part in: before, one that raised for the hook
    was a bare AttributeError from the engine, and one that answered with
    ``Policy.balance`` had the class's own balance silently never called."""

    class Raises(type):
        def __getattribute__(cls, name):
            if name == "balance":
                raise AttributeError(name)
            return super().__getattribute__(name)

    class Masks(type):
        def __getattribute__(cls, name):
            return Policy.balance if name == "balance" else super().__getattribute__(name)

    for meta in (Raises, Masks):
        class Hidden(Policy, metaclass=meta):
            name = "hidden"

            def balance(self, view):
                raise LookupError("called")

        assert Hidden().hooks() == ["balance"]
        with pytest.raises(PolicyError, match=r"policy 'hidden' .*: balance raised LookupError: called"):
            sim_of(Hidden).run(0.1)


def test_a_hook_the_instance_cannot_look_up_is_an_input_error():
    class Guarded(Policy):
        name = "guarded"

        def balance(self, view):
            return None

        def __getattribute__(self, name):
            if name == "balance":
                raise PermissionError("hands off")
            return super().__getattribute__(name)

    with pytest.raises(InputError, match=r"Guarded: balance: expected a hook the instance can look up; "
                                         r"policy.balance raised PermissionError: hands off"):
        sim_of(Guarded)


def test_sys_exit_in_a_hook_is_the_policys_failure():
    class Quits(Policy):
        name = "quits"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            raise SystemExit(5)

    with pytest.raises(PolicyError, match=rf"policy 'quits' \({HERE}:Quits\): select_task_rq raised SystemExit: 5 "):
        sim_of(Quits).run(0.1)


@pytest.mark.parametrize("body,raised", [
    ("import sys\nsys.exit(5)\n", "SystemExit: 5 (line 2)"),
    ("raise SystemExit('bye')\n", "SystemExit: bye (line 1)"),
    ("x = 1\nraise KeyboardInterrupt\n", "KeyboardInterrupt (line 2)"),
])
def test_a_file_that_exits_or_interrupts_at_import_is_an_input_error(tmp_path, body, raised):
    f = tmp_path / "quits.py"
    f.write_text(body)
    with pytest.raises(InputError) as e:
        load_policy(f"{f}:Quits")
    assert str(e.value) == f"--scheduler: {f}: expected a Python file that loads; it raised {raised}"


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals need the main thread")
def test_a_real_ctrl_c_during_import_stays_a_keyboard_interrupt(tmp_path):
    f = tmp_path / "slow.py"
    f.write_text("import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n")
    # Python's own handler, whatever an earlier test left (the CLI's main() leaves SIG_DFL,
    # under which this signal would end the test session)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            load_policy(f"{f}:Slow")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # put back
    finally:
        signal.signal(signal.SIGINT, before)


# ------------------------------------------------------------------ names the engine never calls

@pytest.mark.parametrize("hook", _ENGINE_ONLY_HOOKS)
def test_every_engine_hook_the_bridge_does_not_call_is_refused(hook):
    cls = type("Late", (Policy,), {"name": "late", hook: lambda self, *a: None})
    with pytest.raises(InputError, match=rf"Late: {hook}: expected only the hooks a Python policy may define "
                                         rf"\({', '.join(HOOKS)}\); the engine never calls {hook} from Python"):
        sim_of(cls)


def _one_edit_away(hook: str) -> list[str]:
    swapped = hook[1] + hook[0] + hook[2:]
    return [hook[:-1], hook + "s", hook[:-1] + ("x" if hook[-1] != "x" else "y"), swapped]


@pytest.mark.parametrize("hook", [*HOOKS, *_ENGINE_ONLY_HOOKS])
def test_a_name_one_edit_from_a_hook_is_refused_naming_it(hook):
    for method in _one_edit_away(hook):
        cls = type("Typo", (Policy,), {"name": "typo", method: lambda self, *a: None})
        with pytest.raises(InputError, match=rf"Typo: {method}: expected a hook's own name .* did you mean {hook}\?$"):
            sim_of(cls)


def test_helpers_of_their_own_names_are_the_classs_business():
    class Helpers(Policy):
        name = "helpers"

        def pick_idlest(self, view):
            return 0

        def balance_score(self, view):  # a hook's name inside it, not a near miss
            return 0

        def _balanc(self):  # private
            return 0

    sim_of(Helpers).run(0.01)


# ------------------------------------------------------------------ the view, in its call and its thread

def test_a_view_used_from_another_thread_raises_a_python_error(capfd):
    seen = []

    class Leak(Policy):
        name = "leak"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            if not seen:
                def read():
                    try:
                        view.nr_cpus
                    except BaseException as e:
                        seen.append(e)
                    seen.append(repr(view))

                t = threading.Thread(target=read)
                t.start()
                t.join()
                seen.append(view.nr_cpus)  # still fine in the hook's own thread
            return None

    sim_of(Leak).run(0.1)  # the run goes on
    err, shown, nr_cpus = seen
    assert type(err) is RuntimeError, repr(err)
    assert str(err).startswith("policy 'leak': this SchedView was handed to select_task_rq in another thread; ")
    assert shown == "<SchedView of select_task_rq (another thread's)>" and nr_cpus == 8
    assert "panicked" not in capfd.readouterr().err


def test_a_simulation_used_from_another_thread_raises_a_python_error(capfd):
    # the engine holds the run's state unsynchronised: another thread gets one RuntimeError,
    # not PyO3's panic and backtrace, and the run stays whole for its own thread
    sim = Simulation(platform="gs101", workload="browsing", lower_bound=False, seed=0)
    seen = []

    def use():
        try:
            sim.run(0.05)
        except BaseException as e:
            seen.append(e)

    t = threading.Thread(target=use)
    t.start()
    t.join()
    err, = seen
    assert type(err) is RuntimeError and "belongs to the thread that made it" in str(err), repr(err)
    assert "panicked" not in capfd.readouterr().err
    sim.run(0.05)
    assert sim.now_ns == 50_000_000


def test_a_simulation_let_go_in_another_thread_is_kept_and_freed_by_its_own(capfd):
    # PyO3 refuses to drop the engine in another thread and raises into that thread's code:
    # the wrapper keeps it instead, with a warning, until its own thread makes a Simulation
    import hetsched.sim as hs

    gc.collect()  # earlier tests' cycles go here, in their own thread
    holder = [Simulation(platform="gs101", workload="periodic", lower_bound=False)]
    seen, warned = [], []

    def let_go():
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                holder.clear()
                gc.collect()
            warned.extend(w)
        except BaseException as e:
            seen.append(e)

    t = threading.Thread(target=let_go)
    t.start()
    t.join()
    assert seen == []
    assert [w.category for w in warned] == [RuntimeWarning] and "was let go in thread" in str(warned[0].message)
    assert [o[0] for o in hs._ORPHANS] == [threading.current_thread()]
    Simulation(platform="gs101", workload="periodic", lower_bound=False)
    assert hs._ORPHANS == []
    assert "unsendable" not in capfd.readouterr().err


def test_a_view_kept_past_its_call_raises_in_any_thread():
    kept = []

    class Keep(Policy):
        name = "keep"

        def balance(self, view):
            kept.append(view)

    sim_of(Keep).run(0.02)
    errors = []
    t = threading.Thread(target=lambda: errors.append(pytest.raises(RuntimeError, lambda: kept[0].now_ns).value))
    t.start()
    t.join()
    with pytest.raises(RuntimeError, match="that call has returned"):
        kept[0].now_ns
    assert "in another thread" in str(errors[0])


# ------------------------------------------------------------------ names

def test_a_name_is_at_most_max_name_len_printable_characters():
    assert MAX_NAME_LEN == 64
    ok = type("Ok", (Policy,), {"name": "n" * MAX_NAME_LEN})
    assert sim_of(ok).scheduler == "n" * MAX_NAME_LEN
    long = type("Long", (Policy,), {"name": "x" * 100_000})
    with pytest.raises(InputError) as e:
        sim_of(long)
    assert str(e.value).startswith(f"{HERE}:Long: name: expected a name of at most {MAX_NAME_LEN} characters ")
    assert "not 100000" in str(e.value) and len(str(e.value)) < 250
    for bad in ("a\nb", "tab\there", "nul\x00"):
        cls = type("Odd", (Policy,), {"name": bad})
        with pytest.raises(InputError, match="Odd: name: expected a name of printable characters"):
            sim_of(cls)
    nameless = type("N" * (MAX_NAME_LEN + 1), (Policy,), {})  # the class's name stands in for it
    with pytest.raises(InputError, match="expected a name of at most"):
        sim_of(nameless)


# ------------------------------------------------------------------ after an interruption, after a refusal

def test_after_ctrl_c_in_a_hook_the_simulation_says_it_was_interrupted():
    class Interrupted(Policy):
        name = "interrupted"

        def select_task_rq(self, view, task, prev_cpu, wake_flags):
            raise KeyboardInterrupt  # as Ctrl-C's handler does, mid-hook

    sim = sim_of(Interrupted)
    with pytest.raises(KeyboardInterrupt):
        sim.run(0.2)
    for again in (sim.result, lambda: sim.run(0.1), sim.observe):
        with pytest.raises(PolicyError) as e:
            again()
        assert str(e.value) == (f"policy 'interrupted' ({HERE}:Interrupted): select_task_rq was interrupted "
                                "(KeyboardInterrupt) in the middle of an event; this simulation cannot go on "
                                "(its state is half-updated): build a new one")


@pytest.mark.parametrize("refusal", [
    {"platform": "gs10"},
    {"workload": "periodic:n=-1"},
    {"knobs": {"no.such.knob": 1}},
])
def test_an_instance_a_simulation_refused_is_free_for_the_next(refusal):
    class Mine(Policy):
        name = "mine"

    p = Mine()
    args = {"platform": "gs101", "workload": "periodic", **refusal}
    with pytest.raises((InputError, UnknownNameError)):
        Simulation(scheduler=p, lower_bound=False, **args)
    sim = Simulation(platform="gs101", workload="periodic", scheduler=p, lower_bound=False)
    assert sim.run(0.01)["scheduler"] == "mine"
    with pytest.raises(InputError, match="a policy instance of its own for each Simulation"):
        Simulation(scheduler=p)


# ------------------------------------------------------------------ the command line: one line, exit 2

POLICIES = '''
import itertools
import hetsched


class NeedsArgs(hetsched.Policy):
    def __init__(self, x):
        pass


class NameRaises(hetsched.Policy):
    @property
    def name(self):
        raise RuntimeError("no name")


class Long(hetsched.Policy):
    name = "x" * 100_000


class Typo(hetsched.Policy):
    def balanc(self, view):
        return None


class Quits(hetsched.Policy):
    name = "quits"

    def select_task_rq(self, view, task, prev_cpu, wake_flags):
        raise SystemExit(5)


class Endless(hetsched.Policy):
    name = "endless"

    def balance(self, view):
        return itertools.repeat((0, 1))
'''


def test_the_cli_reports_each_in_one_line(tools, tmp_path):
    (tmp_path / "bad.py").write_text(POLICIES)
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(5)\n")
    (tmp_path / "interrupts.py").write_text("raise KeyboardInterrupt\n")
    cases = {
        "exits": ("exits.py:X", "--scheduler: exits.py: expected a Python file that loads; it raised SystemExit: 5 "
                                "(line 2)"),
        "interrupts": ("interrupts.py:X", "--scheduler: interrupts.py: expected a Python file that loads; it raised "
                                          "KeyboardInterrupt (line 1)"),
        "needs-args": ("bad.py:NeedsArgs", "bad.py:NeedsArgs: __init__: expected a class that needs no arguments"),
        "name-raises": ("bad.py:NameRaises", "bad.py:NameRaises: name: expected a name that can be read; reading it "
                                             "raised RuntimeError: no name (at bad.py:"),
        "long": ("bad.py:Long", f"bad.py:Long: name: expected a name of at most {MAX_NAME_LEN} characters"),
        "typo": ("bad.py:Typo", "bad.py:Typo: balanc: expected a hook's own name", "did you mean balance?"),
        "quits": ("bad.py:Quits", "policy 'quits' (bad.py:Quits): select_task_rq raised SystemExit: 5 (at bad.py:"),
        "endless": ("bad.py:Endless", "policy 'endless' (bad.py:Endless): balance returned an iterator of more than "
                                      f"{MAX_ITEMS} migrations"),
    }
    jobs = {name: ["run", "--platform", "gs101", "--workload", "periodic", "--duration", "0.2", "--no-lower-bound",
                   "--scheduler", spec, "--out", str(tmp_path / name)] for name, (spec, *_) in cases.items()}
    procs = tools.run_cli_many(jobs, cwd=tmp_path, workers=2)
    for name, (_, *needles) in cases.items():
        line = tools.assert_one_line_error(procs[name], *needles)
        assert len(line) < 400, line
        tools.assert_no_outputs(tmp_path / name)
