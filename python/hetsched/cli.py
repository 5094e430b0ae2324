"""The ``hetsched`` command line.

Every command runs on built-in defaults with no arguments. Bad input gets one line on
stderr naming the file or option, the field and what was expected, and exit status 2;
output files are written under temporary names and renamed only when complete. Ctrl-C
(SIGINT) or SIGTERM stops a command where it is: one line on stderr says what it stopped
and what it kept, and the exit status is 130 or 143 (128 + the signal), as a shell reports
a process the signal ended.
"""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path
from typing import Callable, List, Optional

import typer
from rich.console import Console
from rich.markup import escape

from hetsched import _input
from hetsched.errors import ClusterError, HetschedError, InputError, OutputError, UnknownNameError, shorten
from hetsched.outputs import OutputSet, describe, recording
# a run's and a replay's files, under the name run, replay and tests/test_outputs.py use
from hetsched.outputs import RunFiles as _RunFiles
from hetsched.runner import Interrupted, interrupting_signal, run_stepped, stop_on_signals, uninterrupted

class _PlainHelpCommand(typer.core.TyperCommand):
    """A command whose --help shows plain brackets. Typer (0.19) escapes the "[default:
    ...]" and "[required]" it appends for Rich's HTML export whenever Rich is installed,
    even in an app that renders no markup (rich_markup_mode=None), so the help would print
    "\\[default: ...]" (fastapi/typer#1058)."""

    def get_help(self, ctx) -> str:
        return super().get_help(ctx).replace("\\[", "[")


class _Typer(typer.Typer):
    """typer.Typer whose commands are :class:`_PlainHelpCommand`."""

    def command(self, *args, cls=None, **kwargs):
        return super().command(*args, cls=cls or _PlainHelpCommand, **kwargs)


app = _Typer(add_completion=False, no_args_is_help=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="hetsched: CPU scheduling on heterogeneous SoCs, simulated.")
platforms_app = _Typer(add_completion=False, rich_markup_mode=None, help="List built-in platforms, or show one.")
app.add_typer(platforms_app, name="platforms")

class _Console(Console):
    """A console whose line is written whole before a signal is taken: rich writes a
    print's buffer, then empties it, and a signal raised between the two (a Ctrl-C just
    after a progress line) would leave the line to be written again with the next print."""

    def print(self, *args, **kwargs) -> None:
        with uninterrupted():
            super().print(*args, **kwargs)


console = _Console()
err_console = _Console(stderr=True)

#: Seeds a comparison or a reproduction runs each configuration with: a CI's width falls as
#: 1/sqrt(n), so past a thousand more seeds say little, and each is a run of every cell
#: (a typo of 10^30 would never end).
MAX_SEEDS = 1000

from hetsched.compare import DEFAULT_PLATFORM as COMPARE_PLATFORM  # noqa: E402
from hetsched.compare import DEFAULT_WORKLOAD as COMPARE_WORKLOAD  # noqa: E402
from hetsched.compare import DOCUMENT_FORMATS as _DOCUMENT_FORMATS  # noqa: E402
from hetsched.compare import format_change as _fmt_change  # noqa: E402
from hetsched.compare import format_mean as _fmt_mean  # noqa: E402
from hetsched.compare import plan_comparison  # noqa: E402
from hetsched.compare import significant as _sig  # noqa: E402
# the summary's statistics under the name tests/test_cli.py imports
from hetsched.compare import summarize_groups as _compare_summary  # noqa: E402,F401
from hetsched.compare_stats import DEFAULT_TEST as _DEFAULT_TEST  # noqa: E402
from hetsched.compare_stats import TESTS as COMPARE_TESTS  # noqa: E402
from hetsched.metric_names import metric_label as _metric_label  # noqa: E402
from hetsched.metric_names import metric_unit as _metric_unit  # noqa: E402


def _scheduler(name: str):
    """A ``--scheduler`` value: a registered name as it is, ``FILE.py:CLASS`` the
    hetsched.Policy subclass that file defines (each Simulation makes its own instance)."""
    from hetsched.policy import is_policy_file, load_policy

    return load_policy(name) if is_policy_file(name) else name


def _platform_argument(name: str):
    """A platform given as the PLATFORM argument (``em``, ``platforms show``), its errors
    named so (load_platform names the --platform option)."""
    from hetsched.platforms import load_platform

    try:
        return load_platform(name)
    except InputError as e:
        if e.source != "--platform":
            raise
        if isinstance(e, UnknownNameError):
            raise UnknownNameError("PLATFORM", e.field, e.name, e.choices) from None
        raise InputError("PLATFORM", e.field, e.expected, e.got) from None


def _default_policy(platform: str, scheduler: Optional[str], governor: Optional[str]) -> tuple[str, str, str]:
    """The scheduler and governor a run uses when the user named none, as the kernel would
    choose them (hetsched.sim.default_policy), and the line that says so (printed once the
    simulation is built, so that bad input still prints nothing on stdout)."""
    if scheduler is not None and governor is not None:
        return scheduler, governor, ""
    from hetsched.platforms import load_platform
    from hetsched.sim import default_policy

    sched, gov, why = default_policy(load_platform(platform), governor)
    chosen = [f"scheduler {sched}"] * (scheduler is None) + [f"governor {gov}"] * (governor is None)
    return scheduler or sched, gov, f"{' and '.join(chosen)} by default on {platform}: {why}"


def _table(*args, **kwargs):
    """A rich Table, imported when a command draws one (not on `run`'s path)."""
    from rich.table import Table

    return Table(*args, **kwargs)


def _progress():
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=err_console, transient=True,
                    disable=not err_console.is_terminal)


def _run_with_progress(sim, duration_s: float | None, label: str, after_step: Callable[[], None] = lambda: None):
    """``sim.run(duration_s)`` with a progress bar, in steps short enough that Ctrl-C
    acts within about a tenth of a second (runner.run_stepped); ``after_step()`` after each."""
    if sim.runs_until_exit(duration_s):
        # the end is not known in advance: until every task has ended
        with err_console.status(f"{label}: until every task ends"):
            return run_stepped(sim, duration_s, on_step=lambda done, total: after_step())
    with _progress() as prog:
        task = prog.add_task(label, total=100)

        def on_step(done: int, total: int) -> None:
            after_step()
            prog.update(task, completed=100 * done // total)

        return run_stepped(sim, duration_s, on_step=on_step)


_written: list[Path] = []  # every file this command renamed into place
_stop_line: Callable[[], str] | None = None


def _when_interrupted(say: Callable[[], str]) -> None:
    """``say()`` is what main() prints if a signal stops the command: what it stopped and
    what it kept (called once the command has unwound, its cleanup done)."""
    global _stop_line
    _stop_line = say


def _wrote() -> str:
    return "wrote " + ", ".join(map(str, _written))


def _simulated(sim, duration_s: float | None, out: Path) -> str:
    """Where a run stopped, for the interruption's line."""
    if sim is None:
        return f"stopped before it started; nothing written to {out}"
    now = sim.now_ns / 1e9
    if sim.runs_until_exit(duration_s):
        return f"stopped at {now:.1f} s simulated (of a run until every task ends); nothing written to {out}"
    return f"stopped at {now:.1f} s of {sim.duration_ns(duration_s) / 1e9:g} s simulated; nothing written to {out}"


def _print_removed(outs: OutputSet, listing=None, what: str = "run", this: str = "") -> None:
    """One line naming the files of an earlier writer that a commit removed (and a warning
    for any it could not), under the files it wrote."""
    line = outs.removed_line(what, this)
    if line:
        (listing or console).print(f"  {line}", markup=False, highlight=False, soft_wrap=True)
    for line in outs.left_lines(what):
        err_console.print(f"hetsched: warning: {line}", markup=False, highlight=False, soft_wrap=True)


def _draw(out: Path, formats: tuple[str, ...] = ("png",), listing=None) -> None:
    """The plots of a result directory (hetsched.plot), listed like the other files (on
    ``listing``, stdout unless that holds a document)."""
    from hetsched.plot import plot_dir

    notes: list[str] = []
    for f in plot_dir(out, formats, notes=notes):
        (listing or console).print(f"  wrote {f}")
    for line in notes:
        err_console.print(f"hetsched plot: {line}", markup=False, highlight=False)


_PLOT_HELP = "also draw OUT/plots/ (PNG; `hetsched plot OUT --format svg|html` for the others)"

_TRACE_FORMAT_HELP = ("perfetto: trace.perfetto-trace (Perfetto's protobuf: ui.perfetto.dev, trace processor); "
                      "ftrace: trace.txt (trace-cmd report text: LISA, `hetsched replay`); "
                      "chrome: trace.json (trace-event JSON)")


def _trace_option(trace: bool, trace_format: str) -> str | bool:
    from hetsched.sim import TRACE_FORMATS

    if trace_format not in TRACE_FORMATS:
        raise UnknownNameError("--trace-format", "trace format", trace_format, TRACE_FORMATS)
    return trace_format if trace else False


@app.command()
def run(
    platform: str = typer.Option("gs101", help="built-in platform name or platform JSON path"),
    workload: List[str] = typer.Option(["phone-mix"], help="NAME[:k=v,...] or rt-app JSON; repeat to run together"),
    scheduler: Optional[str] = typer.Option(None, help="scheduler policy: a registered name, or FILE.py:CLASS "
                                                       "(a hetsched.Policy written in Python) [as the kernel "
                                                       "chooses: eas with an Energy Model and CPUs of different "
                                                       "capacities under schedutil, else cfs]"),
    governor: Optional[str] = typer.Option(None, help="cpufreq governor [schedutil; ondemand on a switcher "
                                                      "platform]"),
    idle_governor: str = typer.Option("menu", help="cpuidle governor: menu or oracle"),
    set_: List[str] = typer.Option([], "--set", help="knob=value (see `hetsched knobs`)"),
    duration: Optional[float] = typer.Option(None, help="simulated seconds [workload's own, else 10]"),
    seed: int = typer.Option(0, help="seed for generated workloads"),
    out: Path = typer.Option(Path("out"), help="output directory"),
    trace: bool = typer.Option(False, "--trace", help="also write a scheduler trace (--trace-format)"),
    trace_format: str = typer.Option("perfetto", help=_TRACE_FORMAT_HELP),
    timeseries: bool = typer.Option(False, "--timeseries", help="also write timeseries.csv"),
    lower_bound: bool = typer.Option(True, "--lower-bound/--no-lower-bound",
                                     help="compute the minimum-energy lower bound (docs/lower-bound.md)"),
    plot: bool = typer.Option(False, "--plot", help=_PLOT_HELP),
):
    """Simulate one configuration and write OUT/result.json (and OUT/phases.txt, rt-app's
    per-phase log)."""
    _input.output_directory(out)
    sim = None  # a signal during the imports below still says where the run stopped
    _when_interrupted(lambda: f"run complete; {_wrote()}" if _written else f"run {_simulated(sim, duration, out)}")
    from hetsched.sim import Simulation

    if duration is not None:
        _input.duration_s(duration)  # before anything is printed
    scheduler, governor, chosen = _default_policy(platform, scheduler, governor)
    sim = Simulation(platform=platform, workload=workload, scheduler=_scheduler(scheduler), governor=governor,
                     knobs=_input.knob_settings(set_), seed=seed, trace=_trace_option(trace, trace_format),
                     timeseries=timeseries, idle_governor=idle_governor, lower_bound=lower_bound)
    files = _RunFiles(out, sim, timeseries)
    try:
        res = _run_with_progress(sim, duration, f"{platform} {sim.scheduler}/{governor}", files.drain)
        written = files.commit(res)
    except BaseException:
        files.abort()
        raise
    d = res.doc
    if chosen:  # stdout holds nothing until the run has succeeded
        console.print(chosen, markup=False, highlight=False)
    console.print(f"[bold]{d['platform']}[/] {d['workload']} {escape(sim.scheduler)}/{governor}: "
                  f"{d['sim_duration_s']:.3f} s simulated in {d['wall_s']:.3f} s wall, "
                  f"energy {d['energy_j']:.4f} J"
                  + (f" ({d['energy_over_bound']:.2f}x its lower bound {d['energy_lower_bound_j']:.4f} J)"
                     if d.get("energy_over_bound") else "")
                  + f", avg power {d['avg_power_mw']:.1f} mW "
                  f"(power model: {d['power_model']}, idle power: {d['idle_power_model']})")
    if d.get("deadlock"):  # the run stopped where its tasks deadlocked (hetsched.deadlock)
        from hetsched.deadlock import warning

        err_console.print(f"hetsched: warning: {warning(d['deadlock'], sim.workload_spec)}", markup=False,
                          highlight=False, soft_wrap=True)
    from hetsched.sim import flat_metrics
    from hetsched.workloads.builtin import headline_metrics

    flat = flat_metrics(d)
    shown = [(k, flat[k]) for k in headline_metrics(workload) if isinstance(flat.get(k), (int, float))]
    if shown:  # the workload's own verdict beside the energy: frame drops, entry time, completion
        console.print(", ".join(f"{k} {_sig(v, 4)}" + (f" {_metric_unit(k)}" if _metric_unit(k) else "")
                                for k, v in shown), markup=False, highlight=False)
    from hetsched.mechanisms import silent_mechanisms

    for line in silent_mechanisms(d):  # a mechanism that never acted: the run is its base's
        console.print(f"note: {line}", markup=False, highlight=False)
    for f in written:
        console.print(f"  wrote {f}")
    _print_removed(files.outs)
    if plot:
        _draw(out)


COMPARE_FORMATS = ("table", *_DOCUMENT_FORMATS)


def _print_compare_table(comparison) -> None:
    """Metrics as rows and configurations as columns when that fits the terminal; else one
    small table a metric, configurations as rows (which fits 80 columns). Under the title,
    the lines on the cells' kernel profiles and fair classes."""
    from rich import box
    from rich.text import Text

    summary, cols, keys = comparison.summary, comparison.cols, comparison.keys
    by = {(e["metric"], e["cell"]): e for e in summary}
    label_w = max(len(_metric_label(k)) for k in keys)
    col_w = [max(len(c), *(max(len(_fmt_mean(by[k, c])), len(_fmt_change(by[k, c]))) for k in keys)) for c in cols]
    console.print(comparison.title, markup=False, highlight=False)
    for line in comparison.setup_lines:
        console.print(line, markup=False, highlight=False)
    console.print(comparison.legend, markup=False, highlight=False)
    if label_w + sum(col_w) + 3 * len(cols) + 4 <= console.width:
        t = _table(box=box.SIMPLE_HEAD)
        t.add_column("metric", no_wrap=True)
        for c in cols:  # eas[knob=1] is text, not markup
            t.add_column(Text(c), justify="right", no_wrap=True)
        for k in keys:
            t.add_row(Text(_metric_label(k)),
                      *(Text(_fmt_mean(by[k, c]) + ("\n" + _fmt_change(by[k, c]) if c != cols[0] else ""))
                        for c in cols))
        console.print(t)
        return
    for k in keys:
        t = _table(title=Text(_metric_label(k)), box=box.SIMPLE_HEAD, title_justify="left")
        t.add_column("configuration", overflow="fold")
        t.add_column("mean ±95% CI", justify="right", no_wrap=True)
        t.add_column(f"vs {cols[0]}", justify="right", no_wrap=True, overflow="fold")
        t.add_column("p", justify="right", no_wrap=True)
        for c in cols:
            e = by[k, c]
            t.add_row(Text(c), _fmt_mean(e), _fmt_change(e), "" if e["p_value"] is None else f"{e['p_value']:.2g}")
        console.print(t)


@app.command()
def compare(
    platform: str = typer.Option(COMPARE_PLATFORM, help="platform name or JSON path"),
    workload: List[str] = typer.Option([COMPARE_WORKLOAD], help="NAME[:k=v,...] or rt-app JSON"),
    scheduler: List[str] = typer.Option([], help="schedulers to compare [all registered]; NAME[knob=v,...] "
                                                 "runs NAME with those knobs, e.g. 'eas[vendor.task_packing=1]'; "
                                                 "FILE.py:CLASS a hetsched.Policy written in Python"),
    governor: List[str] = typer.Option([], help="governors to compare [schedutil]"),
    idle_governor: str = typer.Option("menu", help="cpuidle governor for every cell: menu or oracle"),
    set_: List[str] = typer.Option([], "--set", help="knob=value applied to every cell"),
    # 5 s: the default phone-mix runs beside a real phone's 280 system threads (about 12,500
    # events per simulated second), and seven policies x 3 seeds of it stay within 3 s
    duration: float = typer.Option(5.0, help="simulated seconds per run"),
    seeds: int = typer.Option(3, min=1, max=MAX_SEEDS, help="runs per cell, seeds 0..N-1"),
    out: Optional[Path] = typer.Option(None, help="also write compare.csv and compare.json here"),
    jobs: int = typer.Option(1, min=0, help="worker processes (0: one per CPU) [1: in this process]"),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS",
                                      help="run the cells on the Ray cluster at ADDRESS (host:port)"),
    metric: List[str] = typer.Option([], "--metric", help="metrics to show (repeat; `all` for every one) "
                                     "[energy, energy over its bound, power, wakeup p99, missed activations, "
                                     "migrations and the workload's headline]"),
    format: str = typer.Option("table", "--format", help="table, csv, json or markdown (the last three on stdout)"),
    plot: bool = typer.Option(False, "--plot", help="with --out, also draw OUT/plots/ (PNG; `hetsched plot OUT "
                                                   "--format html` for one page)"),
    test: str = typer.Option(_DEFAULT_TEST, "--test", help="the test against the baseline: paired-t (Student's t "
                             "on the per-seed differences), wilcoxon (signed ranks on them, with the Hodges-Lehmann "
                             "estimate and interval; 6 seeds or more) or welch (unpaired)"),
):
    """Run several scheduler/governor cells on one workload and seed set; print one table.

    With no arguments: every registered scheduler with schedutil on the built-in
    phone-like mixed workload on gs101."""
    if out is not None:
        _input.output_directory(out)
    plan = None
    done = 0

    def kept() -> str:
        if _written:
            return f"compare complete; {_wrote()}"
        nothing = "nothing written" + (f" to {out}" if out else "")
        if plan is None:  # the imports and the cells' validation take a second or more
            return f"compare stopped before its first run; {nothing}"
        return f"compare stopped after {done} of {len(plan.specs)} runs; {nothing}"

    _when_interrupted(kept)
    _input.duration_s(duration)  # before any cell runs
    if format not in COMPARE_FORMATS:
        raise UnknownNameError("--format", "format", format, COMPARE_FORMATS)
    if plot and out is None:
        raise InputError("--plot", "--plot", "--out as well (the plots are drawn from OUT's files)")
    plan = plan_comparison(platform, workload, scheduler, governor, idle_governor, set_, duration, seeds, metric,
                           test)
    total = len(plan.specs)
    t0 = time.perf_counter()
    with _progress() as prog:
        task = prog.add_task("compare", total=total)

        def on_result(sp, _result):
            nonlocal done
            done += 1
            prog.advance(task)
            if not err_console.is_terminal:  # a log or a pipe: a line a finished run
                err_console.print(f"compare: {done}/{total} runs, {sp.cell}/{sp.governor} seed {sp.seed} done",
                                  markup=False, highlight=False)

        results = plan.run(jobs=jobs or None, ray=ray, on_result=on_result)
    comparison = plan.summarize(results)
    footer = f"{len(comparison.rows)} runs in {time.perf_counter() - t0:.1f} s wall"
    if format == "table":
        _print_compare_table(comparison)
        for line in comparison.notes:
            console.print(f"note: {line}", markup=False, highlight=False)
        console.print(footer + ".", markup=False, highlight=False)
    else:
        sys.stdout.write(comparison.document(format))
        err_console.print(footer + ".", markup=False, highlight=False)
    if out is not None:
        # the plots of an earlier comparison in OUT are drawn from the files replaced here
        with OutputSet(out, replaces=("plots/compare_*", "plots/compare.html")) as outs:
            for name, text in comparison.files().items():
                outs.write(name, text)
            written = outs.commit()
        # with --format csv|json|markdown stdout is that document: the file list goes beside it
        listing = console if format == "table" else err_console
        for f in written:
            listing.print(f"  wrote {f}")
        _print_removed(outs, listing, "comparison")
        if plot:
            _draw(out, listing=listing)


@platforms_app.callback(invoke_without_command=True)
def platforms_list(ctx: typer.Context):
    """List every built-in platform: topology, power model, what is published/estimated."""
    if ctx.invoked_subcommand is not None:
        return
    from hetsched.platforms import platform_summaries

    t = _table(title="built-in platforms")
    for c in ("name", "CPUs", "cores", "power model", "idle power", "estimated", "missing"):
        t.add_column(c)
    for r in platform_summaries():
        pm = r["power_model"] or f"not runnable: {r['reason']}"
        t.add_row(r["name"], r["cpus"], r["cores"], pm, r["idle_power_model"] or "-",
                  ", ".join(r["estimated"]) or "-", ", ".join(r["missing"]) or "-")
    console.print(t)


@platforms_app.command("show")
def platforms_show(name: str = typer.Argument(..., help="platform name or JSON path")):
    """Topology and the per-OPP capacity / power / cost table of one platform."""
    from hetsched.platforms import load_platform

    p = _platform_argument(name)
    console.print(f"[bold]{p.name}[/]: {p.description}  (power model: {p.power_model})")
    for c in p.clusters:
        console.print(f"\n[bold]{c.name}[/] {c.core}: CPUs {list(c.cpus)}, capacity_orig {c.capacity_orig} "
                      f"(capacity-dmips-mhz {c.capacity_dmips_mhz}), power from {c.power_source}")
        t = _table()
        for col in ("kHz", "µV", "perf (capacity)", "power µW", "cluster µW", "cost", "inefficient"):
            t.add_column(col, justify="right")
        for o in c.opps:
            t.add_row(str(o.khz), str(o.uv) if o.uv is not None else "-", str(o.perf), str(o.power_uw),
                      str(o.cluster_power_uw), str(o.cost), "yes" if o.inefficient else "")
        console.print(t)
        ti = _table(title="idle states")
        for col in ("state", "level", "exit latency µs", "target residency µs", "power µW", "cluster µW"):
            ti.add_column(col, justify="right")
        for s in c.idle_states:
            ti.add_row(s.name, s.level, f"{s.exit_latency_ns / 1000:g}", f"{s.target_residency_ns / 1000:g}",
                       str(s.power_uw), str(s.cluster_power_uw))
        console.print(ti)
    for n in p.notes:
        console.print(f"- {n}")


@app.command()
def em(platform: str = typer.Argument("gs101", help="platform name or JSON path"),
       kernel: str = typer.Option("mainline-6.12", help="kernel profile: mainline-6.12 or android-4.19")):
    """The Energy Model EAS uses: perf domains in rd->pd order, each state's performance,
    power and cost (10 x power / performance, v6.12), and the inefficient states."""
    from hetsched.energy_model import EnergyModel

    if kernel not in ("mainline-6.12", "android-4.19"):
        raise UnknownNameError("--kernel", "kernel", kernel, ["mainline-6.12", "android-4.19"])
    model = EnergyModel.from_platform(_platform_argument(platform), kernel=kernel)
    for d in model.domains():
        t = _table(title=f"perf domain CPUs {d['cpus']} (capacity {d['capacity']})")
        for col in ("kHz", "performance", "power µW", "cost", ""):
            t.add_column(col, justify="right")
        for st in d["states"]:
            t.add_row(str(st["khz"]), str(st["performance"]), str(st["power_uw"]), str(st["cost"]),
                      "inefficient (skipped)" if st["inefficient"] else "")
        console.print(t)


@app.command()
def knobs():
    """Every knob: kernel name, default, range, unit and source."""
    from hetsched.sim import knob_table

    t = _table(title="knobs (--set name=value)")
    for c in ("name", "default", "range", "unit", "source / meaning"):
        t.add_column(c)
    for k in knob_table():
        t.add_row(k["name"], f"{k['default']:g}", f"[{k['min']:g}, {k['max']:g}]", k["unit"],
                  f"{k['source']}: {k['description']}")
    console.print(t)


@app.command()
def workloads():
    """Built-in workloads and their parameters."""
    from hetsched.workloads.builtin import WORKLOADS

    for w in WORKLOADS.values():
        console.print(f"[bold]{w.name}[/]: {w.description}")
        for p in w.params:
            rng = "|".join(p.choices) if p.choices else f"[{p.lo}, {p.hi}]"
            console.print(f"    {p.name}={p.default!r}  {rng}  {p.help}")
    console.print("Any rt-app JSON file works too (the whole grammar; docs/workloads.md). An rt-app file draws "
                  "nothing at random: every seed runs it the same (the built-in workloads above draw a "
                  "phone's run-to-run variation from theirs, noise=1).")
    from hetsched.workloads.examples import EXAMPLES, examples_dir

    # a file of the same name in the working directory runs instead (workloads/examples.py)
    console.print(f"rt-app examples shipped in {escape(str(examples_dir()))}, run by --workload NAME.json:")
    for name, what in EXAMPLES.items():
        console.print(f"[bold]{name}[/]: {escape(what)}")


@app.command()
def schedulers():
    """Registered schedulers and governors."""
    from hetsched.sim import GOVERNORS, IDLE_GOVERNORS, POLICIES

    for n, p in POLICIES.items():
        console.print(f"scheduler [bold]{n}[/]: {escape(p['summary'])}")
    for n, d in GOVERNORS.items():
        console.print(f"governor  [bold]{n}[/]: {d}")
    for n, d in IDLE_GOVERNORS.items():
        console.print(f"idle governor [bold]{n}[/]: {d}")


@app.command(context_settings={"allow_interspersed_args": False})
def record(
    command: List[str] = typer.Argument(..., help="the command to trace, after --"),
    out: Path = typer.Option(..., "--out", help="trace file to write (raw ftrace text)"),
    buffer_kb: int = typer.Option(65536, help="ring buffer per CPU, KiB"),
):
    """Record a scheduler trace of COMMAND on this machine through tracefs (as root):
    `hetsched record --out run.trace -- perf bench sched messaging -g 1 -l 100`.
    tracefs is left as it was, even when interrupted (docs/traces.md)."""
    _input.writable_file(out, "--out", "file", "trace file")
    from hetsched.traces.parse import load_trace
    from hetsched.traces.record import record as do_record

    header = None
    _when_interrupted(lambda: f"record complete; wrote {out}" if header
                      else f"record stopped: tracefs restored, nothing written to {out}")
    try:
        header = do_record(command, out, buffer_kb=buffer_kb,
                           log=lambda m: err_console.print(m, markup=False, highlight=False))
    except KeyboardInterrupt as e:
        # SIGINT / SIGTERM under record's own handlers (the message is the signal's name):
        # tracefs was restored, nothing written
        raise Interrupted(getattr(signal.Signals, str(e), signal.SIGINT)) from None
    tr = load_trace(out)
    console.print(f"recorded {' '.join(command)} (exit status {header['exit_status']}, "
                  f"{header['wall_s']:.3f} s): {tr.used} events on {tr.nr_cpus} CPUs, "
                  f"{header['lost_events']} lost")
    if header["lost_events"]:
        err_console.print(f"hetsched: warning: {header['lost_events']} events were overwritten; "
                          "raise --buffer-kb", markup=False)
    console.print(f"  wrote {out}")


_REPAIR_HELP = ("repair what the kernel cannot write instead of refusing the trace: time going backwards on a CPU "
                "(sorted per CPU), a task switched in while running on another CPU (the earlier run ended there); "
                "one warning counts the repairs")


def _load_trace(path: str, repair: bool):
    """load_trace, its repair warning (if any) as the CLI's one warning line on stderr."""
    import warnings

    from hetsched.traces.check import repair_message
    from hetsched.traces.parse import TraceRepairWarning, load_trace

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TraceRepairWarning)
        tr = load_trace(path, repair=repair)
    msg = repair_message(path, tr.repaired)
    if msg:
        err_console.print(f"hetsched: warning: {msg}", markup=False, highlight=False, soft_wrap=True)
    return tr


@app.command()
def replay(
    trace_file: str = typer.Argument(..., metavar="FILE", help="trace: Perfetto, trace-cmd report text, ftrace "
                                      "text, systrace HTML, trace.dat[.gz] or a `hetsched record` file"),
    platform: str = typer.Option("host", help="platform to replay on (name, JSON path or host)"),
    scheduler: Optional[str] = typer.Option(None, help="scheduler policy: a registered name, or FILE.py:CLASS "
                                                       "[as `run` chooses]"),
    governor: Optional[str] = typer.Option(None, help="cpufreq governor [as `run` chooses]"),
    idle_governor: str = typer.Option("menu", help="cpuidle governor: menu or oracle"),
    set_: List[str] = typer.Option([], "--set", help="knob=value (see `hetsched knobs`)"),
    source_platform: Optional[str] = typer.Option(
        None, help="platform the trace was recorded on: run time becomes work with its capacities and "
                   "the trace's frequencies [a `hetsched record` file: host; else none: work = run time]"),
    include_kthreads: bool = typer.Option(False, "--include-kthreads", help="also replay kernel threads"),
    tasks: str = typer.Option("auto", help="auto | all | tree (the recorded command's process tree)"),
    relative_sleeps: bool = typer.Option(False, "--relative-sleeps",
                                         help="sleeps woken from idle/IRQ last their traced duration "
                                              "instead of ending at the traced time"),
    keep_switch: bool = typer.Option(False, "--keep-switch",
                                     help="keep in each recorded run the context switch into it, which the "
                                          "engine charges again (cost.context_switch_ns) [taken off]"),
    groups: bool = typer.Option(True, "--groups/--no-groups",
                                help="put each thread of an Android trace in the scheduling group its process "
                                     "was in (top-app, foreground, background; from the processes' "
                                     "oom_score_adj), which the Android kernel profiles read [on where the "
                                     "trace has them]"),
    duration: Optional[float] = typer.Option(None, help="simulated seconds [until every task ends]"),
    out: Path = typer.Option(Path("out"), help="output directory"),
    trace: bool = typer.Option(False, "--trace", help="also write a scheduler trace (--trace-format)"),
    trace_format: str = typer.Option("perfetto", help=_TRACE_FORMAT_HELP),
    write_spec: bool = typer.Option(False, "--write-spec", help="also write workload.json (the WorkloadSpec)"),
    figures: bool = typer.Option(False, "--figures", help="also print a phone's figures (as `hetsched "
                                 "trace-stats`) of the trace and of the run, measured on the run's ftrace text, "
                                 "which it writes (trace.txt)"),
    repair: bool = typer.Option(False, "--repair", help=_REPAIR_HELP),
):
    """Replay a real trace: per task its run bursts, sleeps and who-woke-whom, on PLATFORM.
    Prints the trace's busy time and makespan beside the simulation's."""
    _input.output_directory(out)
    sim = None  # a signal during the imports below still says where the replay stopped
    _when_interrupted(lambda: f"replay complete; {_wrote()}" if _written
                      else f"replay {_simulated(sim, duration, out)}")
    import json

    from hetsched.sim import Simulation
    from hetsched.traces.plan import plan_replay

    plan = plan_replay(trace_file, lambda f: _load_trace(f, repair), platform=platform,
                       source_platform=source_platform, include_kthreads=include_kthreads, tasks=tasks,
                       relative_sleeps=relative_sleeps, keep_switch=keep_switch, groups=groups, sets=set_)
    tr, rep = plan.trace, plan.replay
    if duration is not None:
        _input.duration_s(duration)
    if figures:
        # the same code measures both sides: the run's side from its own ftrace text
        if trace and trace_format != "ftrace":
            raise InputError("--figures", "--trace-format", "ftrace (the run's figures are measured on its ftrace "
                             "text)", got=trace_format)
        trace, trace_format = True, "ftrace"
    scheduler, governor, chosen = _default_policy(platform, scheduler, governor)
    sim = Simulation(platform=platform, workload=rep.spec, scheduler=_scheduler(scheduler), governor=governor,
                     knobs=_input.knob_settings(set_), trace=_trace_option(trace, trace_format),
                     idle_governor=idle_governor)
    files = _RunFiles(out, sim, timeseries=False, extra=("workload.json",) if write_spec else ())
    try:
        res = _run_with_progress(sim, duration, f"replay on {platform} {scheduler}/{governor}", files.drain)
        cmp = plan.document(res.doc)
        written = files.commit(res, extra={"workload.json": json.dumps(rep.spec) + "\n"} if write_spec else None)
    except BaseException:
        files.abort()
        raise
    if chosen:
        console.print(chosen, markup=False, highlight=False)
    console.print(f"[bold]{trace_file}[/] ({tr.format}): {tr.used} events used, {tr.nr_skipped} lines skipped"
                  + (f" ({', '.join(f'{k}: {v}' for k, v in tr.skipped.most_common(4))})" if tr.nr_skipped else ""))
    console.print(f"{len(rep.tasks)} tasks replayed on {platform} {scheduler}/{governor} "
                  f"(power model: {res.doc['power_model']})")
    for n in rep.notes:
        console.print(f"- {n}")
    t = _table(title="trace vs simulation")
    for c in ("", "trace", "simulated", "error"):
        t.add_column(c, justify="right")

    def fmt(v):
        return "-" if v is None else f"{v:.6f} s"

    def pct(v):
        return "-" if v is None else f"{v * 100:+.2f}%"

    t.add_row("total busy time", fmt(cmp["trace_busy_s"]), fmt(cmp["sim_busy_s"]), pct(cmp["busy_error"]))
    t.add_row("makespan", fmt(cmp["trace_makespan_s"]), fmt(cmp["sim_makespan_s"]), pct(cmp["makespan_error"]))
    console.print(t)
    if figures:
        _replay_figures(tr, plan.source_platform, sim, out)
    for f in written:
        console.print(f"  wrote {f}")
    _print_removed(files.outs, this="replay")


def _replay_figures(tr, src_platform, sim, out: Path) -> None:
    """A phone's figures of the trace (on its source platform's clusters when it has the
    trace's CPUs) beside the run's (on the platform it ran on)."""
    from hetsched.traces.figures import figure_cells, phone_figures
    from hetsched.traces.parse import load_trace

    def fits(p, nr_cpus: int):
        return p if p is not None and p.nr_cpus == nr_cpus else None

    run_trace = load_trace(out / "trace.txt")
    ran_on = fits(sim.platform, run_trace.nr_cpus)
    figs = [phone_figures(tr, fits(src_platform, tr.nr_cpus)), phone_figures(run_trace, ran_on)]
    labels, cells = figure_cells(figs, ran_on)
    _print_figures(["trace", "simulated"], labels, cells, "a phone's figures: trace and simulation")


def _print_figures(columns: list[str], labels: list[str], cells: dict[str, list], title: str) -> None:
    t = _table(title=title)
    t.add_column("figure")
    for c in columns:
        t.add_column(escape(c), justify="right")
    for label in labels:
        t.add_row(escape(label), *(escape(text) for _, text in cells[label]))
    console.print(t)


@app.command("trace-stats")
def trace_stats(
    trace_files: List[str] = typer.Argument(..., metavar="TRACE...", help="traces: Perfetto, systrace HTML, "
                                            "ftrace or trace-cmd report text, trace.dat[.gz], the trace of "
                                            "`hetsched run --trace` or a `hetsched record` file"),
    platform: Optional[str] = typer.Option(None, help="the platform the traces ran on (name or JSON path): adds "
                                                      "each cluster's busy share and the idle states' names"),
    format: str = typer.Option("table", "--format", help="table, json or csv (the last two on stdout)"),
    repair: bool = typer.Option(False, "--repair", help=_REPAIR_HELP),
):
    """A phone's scheduling figures measured on each trace, one column per trace: threads
    that run, wakeups per second, busy share, run-queue wait over run time (all threads,
    the foreground app's UI thread and RenderThread, surfaceflinger), wakeup latency and
    idle states (docs/traces.md, "Measuring a phone's figures")."""
    if format not in ("table", "json", "csv"):
        raise UnknownNameError("--format", "format", format, ["table", "json", "csv"])
    from hetsched.platforms import load_platform
    from hetsched.traces.figures import figure_cells, phone_figures

    for f in trace_files:
        if not f.strip():  # a Path would read '' as '.', this directory
            raise InputError("TRACE", "trace", "a trace file path", got=f)
    plat = load_platform(platform) if platform else None
    figs = [phone_figures(_load_trace(f, repair), plat) for f in trace_files]
    if format == "json":
        import json

        sys.stdout.write(json.dumps([f.as_dict() for f in figs], indent=1) + "\n")
        return
    labels, cells = figure_cells(figs, plat)
    if format == "csv":
        import csv

        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["figure", *trace_files])
        for label in labels:
            w.writerow([label, *("" if v is None else v for v, _ in cells[label])])
        return
    _print_figures(trace_files, labels, cells, "a phone's figures" + (f" (platform {plat.name})" if plat else ""))
    for f, fig in zip(trace_files, figs):
        if fig.stats:
            console.print(f"{f}: " + ", ".join(f"{k} {v}" for k, v in fig.stats.items()), markup=False,
                          highlight=False)


@app.command()
def sweep(
    grid: str = typer.Argument(..., metavar="GRID.yaml", help="the grid: platforms, workloads, schedulers, "
                                "governors, knobs (name: list of values), seeds, duration (docs/sweeps.md)"),
    out: Path = typer.Option(Path("out"), help="output directory: OUT/sweep.parquet, one row per run"),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS",
                                      help="run on the Ray cluster at ADDRESS (host:port) [a local process pool]"),
    resume: bool = typer.Option(False, "--resume", help="continue OUT/sweep.parquet: skip the cells it has"),
    retry_failed: bool = typer.Option(False, "--retry-failed", help="with --resume, run failed cells again"),
    workers: int = typer.Option(0, min=0, help="local worker processes [one per CPU]"),
    flush_every: float = typer.Option(2.0, min=0.0, max=86_400.0, help="seconds between rewrites of sweep.parquet"),
    plot: bool = typer.Option(False, "--plot", help=_PLOT_HELP),
):
    """Run every cell of a grid (the product of its lists) on a local process pool or a Ray
    cluster; one row per run in OUT/sweep.parquet, rewritten atomically as rows arrive.
    A failing cell records its error and the sweep goes on."""
    _input.output_directory(out)
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from hetsched.sweep import plan_sweep

    plan = plan_sweep(grid, out, workers=workers or None, ray_address=ray, resume=resume, retry_failed=retry_failed,
                      flush_every_s=flush_every)
    prog = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("done {task.fields[done]}  failed {task.fields[failed]}  "
                               "remaining {task.fields[remaining]}"),
                    TimeElapsedColumn(), TimeRemainingColumn(), console=err_console,
                    disable=not err_console.is_terminal)
    task = None

    def on_progress(st):
        nonlocal task
        if task is None:
            task = prog.add_task("sweep", total=st.total, done=0, failed=0, remaining=0)
        prog.update(task, completed=st.done + st.failed, done=st.done, failed=st.failed, remaining=st.remaining)

    _when_interrupted(plan.kept)
    with prog:
        st = plan.run(on_progress=on_progress)
    console.print(plan.summary(st))
    console.print(f"  wrote {plan.path}")
    if plot:
        _draw(out)


@app.command()
def plot(
    result_dir: Path = typer.Argument(..., metavar="RESULT_DIR",
                                      help="the --out directory of run, compare or sweep"),
    format: List[str] = typer.Option(["png"], "--format", help="png, svg or html (repeat for several)"),
):
    """Draw a result directory into RESULT_DIR/plots/: for a run, frequency per cluster over
    time, per-CPU utilisation and idle state, energy by cluster (running/idle) and OPP
    residency; for a comparison or a sweep, energy against the workload's quality metric
    with 95 % intervals and each metric's change. `--format html` writes one
    self-contained page (docs/plots.md)."""
    from hetsched.plot import PLOT_FORMATS

    for f in format:
        if f not in PLOT_FORMATS:
            raise UnknownNameError("--format", "format", f, PLOT_FORMATS)
    _draw(result_dir, tuple(dict.fromkeys(format)))


@app.command()
def reproduce(
    study: str = typer.Argument(..., metavar="STUDY", help="learning-eas, util-aware-lb, fa-cfs, ospm2020, "
                                "hmc-balance, or all"),
    quick: bool = typer.Option(False, "--quick", help="shorter runs: a few minutes a study on 2 cores"),
    seeds: int = typer.Option(0, min=0, max=MAX_SEEDS, help="runs per configuration (0: 3 with --quick, "
                                                              "10 without)"),
    out: Path = typer.Option(Path("reproduce"), help="output directory: STUDY.csv, STUDY.md, STUDY.runs.csv, plots, report.html"),
    jobs: int = typer.Option(0, min=0, help="worker processes (0: one per CPU)"),
    ray: Optional[str] = typer.Option(None, "--ray", metavar="ADDRESS",
                                      help="run on the Ray cluster at ADDRESS (host:port)"),
    resume: bool = typer.Option(False, "--resume", help="take the runs OUT/runs.jsonl holds from an earlier "
                                "reproduction (stopped, or failed) by this same build instead of running them again"),
    smoke: bool = typer.Option(False, "--smoke", hidden=True, help="seconds-long runs, for the tests"),
):
    """Rebuild a study's evaluation on the nearest built-in platforms, over several seeds,
    and write its published numbers beside the simulated ones (95 % CI, the changes and a
    verdict on each: agrees, disagrees, inconclusive or not decidable), its plots, and
    OUT/report.html gathering every study in OUT."""
    _input.output_directory(out)
    from hetsched.reproduce import plan_reproduction

    plan = plan_reproduction(study, out, level="smoke" if smoke else ("quick" if quick else "full"), seeds=seeds,
                             jobs=jobs or None, ray=ray, resume=resume)
    _when_interrupted(plan.kept)
    note = plan.build_note()
    if note:
        err_console.print(f"hetsched: {note}", markup=False, highlight=False, soft_wrap=True)
    plan.run(progress=err_console.is_terminal,
             on_study=lambda res: console.print(plan.study_summary(res), markup=False, highlight=False),
             warn=lambda m: err_console.print(f"hetsched: warning: {m}", markup=False, highlight=False,
                                              soft_wrap=True))
    console.print(f"  wrote {out / 'report.html'}")


def main() -> None:
    stop_on_signals()
    _written.clear()  # (main() may be called again in one process: the tests)
    try:
        with recording(_written):
            status = _main()
    except Interrupted as e:
        status = _interrupted(e.signum)
    # the command is over: a signal now ends the process at once, with the status a shell
    # gives it (not a traceback from an exit handler, such as the one joining a pool's thread)
    for s in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(s) is not signal.SIG_IGN:
            signal.signal(s, signal.SIG_DFL)
    sys.exit(status)


def _interrupted(signum: int) -> int:
    """The one line of a command a signal stopped (what it stopped, what it kept) and its
    exit status, 128 + the signal's number as a shell gives it."""
    what = "stopped"
    if _stop_line is not None:
        try:
            what = _stop_line()
        except Exception as e:  # the line is printed anyway
            what = f"stopped ({type(e).__name__} while saying where: {e})"
    err_console.print(f"hetsched: interrupted ({signal.Signals(signum).name}): {what}", markup=False,
                      highlight=False, soft_wrap=True)
    return 128 + signum


def _main() -> int:
    try:
        # standalone_mode=False: errors come here as exceptions, and an Exit (--help, a
        # typer.Exit) comes back as its exit code; a signal raises Interrupted, which
        # neither typer nor click catches
        rv = app(standalone_mode=False)
    except SystemExit:
        raise
    except BaseException as e:
        signum = e.signum if isinstance(e, Interrupted) else interrupting_signal()
        if signum is not None:  # what the signal stopped may have surfaced as another error
            return _interrupted(signum)
        if isinstance(e, HetschedError):
            err_console.print(f"hetsched: error: {e}{_kept(e)}", markup=False, highlight=False, soft_wrap=True)
            return 2
        if isinstance(e, (typer.Abort, KeyboardInterrupt)):  # without our handler (a library's own)
            err_console.print("hetsched: aborted")
            return 130
        if isinstance(e, Exception):  # click usage errors (typer >= 0.20 vendors click as typer._click)
            click_exc = _click_exception_types()
            if isinstance(e, click_exc["ClickException"]):
                # click echoes an unexpected argument whole: a 100 KB one stays one short line
                err_console.print(f"hetsched: error: {shorten(e.format_message(), 300)}", markup=False,
                                  highlight=False, soft_wrap=True)
                return e.exit_code if e.exit_code else 2
            if isinstance(e, click_exc["Exit"]):
                return e.exit_code
        raise
    return rv if isinstance(rv, int) and not isinstance(rv, bool) else 0


def _kept(e: HetschedError) -> str:
    """What an error leaves, for its line: the files the command had renamed into place
    before it (a run's, when its plots fail), what an output error's writer or a command
    whose cluster died kept elsewhere (journaled runs, a store's last rows), or that an
    output error wrote nothing."""
    if isinstance(e, ClusterError) and e.kept:
        return "; kept " + e.kept  # the rows' file, also among the files written: said once
    kept = [describe(_written)] if _written else []
    if isinstance(e, OutputError) and e.kept:
        kept.append(e.kept)
    if kept:
        return "; kept " + "; ".join(kept)
    if isinstance(e, OutputError) and e.directory is not None:
        return f"; nothing written to {shorten(str(e.directory), 200)}"
    return ""


def _click_exception_types() -> dict[str, tuple[type, ...]]:
    """ClickException / Exit classes of every click the running typer may raise: the
    vendored ``typer._click`` (typer >= 0.20) and the standalone ``click`` package."""
    import importlib

    found: dict[str, list[type]] = {"ClickException": [], "Exit": []}
    for mod in ("typer._click.exceptions", "click.exceptions"):
        try:
            m = importlib.import_module(mod)
        except ImportError:
            continue
        for name in found:
            cls = getattr(m, name, None)
            if isinstance(cls, type):
                found[name].append(cls)
    found["Exit"].append(typer.Exit)
    return {k: tuple(v) for k, v in found.items()}


if __name__ == "__main__":
    main()
