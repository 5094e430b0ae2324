"""`hetsched reproduce`: the five studies' evaluations rebuilt on the simulator, beside
their published tables (docs/reproduce.md).

>>> from hetsched.reproduce import reproduce                       # doctest: +SKIP
>>> reproduce(["fa-cfs"], out_dir=Path("out"), level="quick", seeds=3)  # doctest: +SKIP

Every study module (``hetsched.reproduce.<module>``) has ``STUDY``, ``TITLE``, ``PAPER``
and ``run(ctx) -> StudyResult``.

``hetsched reproduce`` is :func:`plan_reproduction` (the study's name checked and the seeds
chosen before anything runs), :meth:`ReproductionPlan.run` and the plan's lines.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from hetsched.errors import ClusterError, HetschedError, UnknownNameError
from hetsched.outputs import OutputSet, os_error
from hetsched.reproduce.core import Context, Row, Run, Runner, StudyResult, read_study, run_times_csv, study_files
from hetsched.reproduce.journal import JOURNAL, RunJournal, journaled_runs
from hetsched.runner import OutLock, remove_dead_temporaries, uninterrupted

__all__ = ["STUDIES", "DEFAULT_SEEDS", "reproduce", "run_study", "plan_reproduction", "ReproductionPlan",
           "Context", "Row", "Run", "Runner", "StudyResult"]

# study name -> module; the order of `reproduce all` and of the report
STUDIES: dict[str, str] = {
    "learning-eas": "hetsched.reproduce.learning_eas",
    "util-aware-lb": "hetsched.reproduce.util_aware_lb",
    "fa-cfs": "hetsched.reproduce.fa_cfs",
    "ospm2020": "hetsched.reproduce.ospm2020",
    "hmc-balance": "hetsched.reproduce.hmc_balance",
}
STUDY_HELP = {
    "learning-eas": "Learning EAS (Han & Lee 2020): Tables 2, 4, 5, 6-7, 9",
    "util-aware-lb": "utilization-aware load balancing (Kim et al.): Table II, Fig. 6, Table III",
    "fa-cfs": "FA-CFS (Tran et al.): Tables 2-5, Figs. 3-4",
    "ospm2020": "Arm's OSPM 2020 talk on vendor EAS changes: each change, Wilcoxon",
    "hmc-balance": "balanced core assignment (Fedorova et al.): Figs. 1-5, the TD scheduler",
}
#: Seeds a configuration runs at each level when none are asked for (docs/reproduce.md, "Levels")
DEFAULT_SEEDS = {"smoke": 2, "quick": 3, "full": 10}


def study_module(name: str):
    if name not in STUDIES:
        raise UnknownNameError("STUDY", "study", name, {**STUDY_HELP, "all": "every study"})
    return importlib.import_module(STUDIES[name])


def study_file_names(name: str) -> tuple[str, ...]:
    """The files a study writes whatever its results (its plots are named by the study)."""
    return (f"{name}.csv", f"{name}.md", f"{name}.json", f"{name}.runs.csv")


def _earlier_plots(out_dir: Path, name: str) -> list[str]:
    """The plots an earlier reproduction of the study listed in its ``STUDY.json``: those
    this one does not draw again are removed with its commit (a level draws other ones)."""
    try:
        doc = json.loads((out_dir / f"{name}.json").read_text())
        return [p[0] for p in doc.get("plots", []) if isinstance(p[0], str) and p[0] == os.path.basename(p[0])
                and not p[0].startswith(".")]
    except Exception:  # none, or not one this build can read: nothing to replace
        return []


def run_study(name: str, ctx: Context) -> StudyResult:
    """Run one study and write its files into ``ctx.out_dir``: all of them, or none (an
    interrupted or failed study leaves no half-drawn plot, nor plots beside the tables of
    an earlier run; hetsched.outputs)."""
    mod = study_module(name)
    t0 = time.perf_counter()
    runs0, resumed0 = ctx.runner.runs_done, ctx.runner.resumed
    timed0 = len(ctx.runner.timings)
    outs = OutputSet(ctx.out_dir, replaces=_earlier_plots(ctx.out_dir, name))
    outs.check(*study_file_names(name))
    # the study draws its plots into a directory of its own in OUT, whose files are then
    # renamed into OUT with its tables (the same file system: each rename is atomic)
    stage = ctx.out_dir / f".{name}.tmp-{os.getpid()}"
    try:
        shutil.rmtree(stage, ignore_errors=True)
        try:
            stage.mkdir(parents=True)
        except OSError as e:
            raise outs.error(e) from None
        try:
            res: StudyResult = mod.run(dataclasses.replace(ctx, out_dir=stage))
        except OSError as e:  # a plot that could not be written (a full disk)
            raise os_error(e, ctx.out_dir / Path(e.filename or name).name, "--out", ctx.out_dir) from None
        res.level, res.seeds = ctx.level, ctx.seeds
        res.runs = ctx.runner.runs_done - runs0
        res.resumed = ctx.runner.resumed - resumed0
        res.wall_s = time.perf_counter() - t0
        for f in sorted(stage.iterdir()):
            outs.adopt(f.name, f)
        for fname, text in study_files(res).items():
            outs.write(fname, text)
        outs.write(f"{name}.runs.csv", run_times_csv(ctx.runner.timings[timed0:]))
        outs.commit()
    finally:
        outs.abort()
        shutil.rmtree(stage, ignore_errors=True)
    return res


def check_destinations(names: Sequence[str], out_dir: Path) -> None:
    """Refuse, before any run, a directory where a study's file, report.html or the
    journal goes (a full-level reproduction runs for hours)."""
    outs = OutputSet(out_dir)
    for n in names:
        outs.check(*study_file_names(n))
    outs.check("report.html", JOURNAL)


def reproduce(names: Sequence[str], out_dir: Path, *, level: str = "quick", seeds: int = 5,
              jobs: int | None = None, ray: str | None = None, progress: bool = False,
              resume: bool = False,
              on_study: Callable[[StudyResult], None] | None = None,
              warn: Callable[[str], None] | None = None) -> list[StudyResult]:
    """Run the named studies (``["all"]``: every one), write each study's files and the
    HTML report of every study found in ``out_dir``. ``ray``: a Ray cluster's address
    to run on instead of a local pool. Every completed run is journaled in
    ``OUT/runs.jsonl`` (not those run on Ray); ``resume``: the runs it holds from an
    earlier reproduction by this same build are taken from it instead of being run again
    (journal.py). ``warn``: how to say that the journal held lines it dropped."""
    from hetsched.reproduce.report import write_report

    names = list(STUDIES) if list(names) == ["all"] else list(names)
    for n in names:
        study_module(n)  # every name checked before anything runs
    # one writer in OUT at a time (a second is refused, naming this one), held to the end
    with OutLock(out_dir, "writing a reproduction"):
        remove_dead_temporaries(out_dir)
        check_destinations(names, Path(out_dir))
        runner = Runner(jobs=jobs, ray=ray, progress=progress)  # a Ray address is checked here
        try:
            runner.journal = RunJournal(Path(out_dir), resume=resume, record=ray is None, warn=warn)
        except BaseException:
            runner.close()
            raise
        ctx = Context(level=level, seeds=seeds, out_dir=Path(out_dir), runner=runner)
        results = []
        failed = True
        try:
            for n in names:
                res = run_study(n, ctx)
                results.append(res)
                if on_study:
                    on_study(res)
            failed = False
        finally:
            runner.close()
            # also after a failed or interrupted study: the studies done so far keep their
            # report (whole: a signal is taken once it is written). After a failure its own
            # error (a full disk again) would hide the first one: the first is reported
            with uninterrupted():
                try:
                    write_report(Path(out_dir))
                except HetschedError:
                    if not failed:
                        raise
    return results


def load_results(out_dir: Path) -> list[StudyResult]:
    """The study results written in ``out_dir``, in the studies' order."""
    out = []
    for name in STUDIES:
        p = Path(out_dir) / f"{name}.json"
        if p.exists():
            out.append(read_study(p))
    return out


# ----------------------------------------------------------------------------- the command's steps

@dataclass
class ReproductionPlan:
    """Studies to reproduce into one directory, their names checked, nothing run yet: what
    ``hetsched reproduce`` runs, and the lines it prints of it. ``names`` as
    :func:`reproduce` takes them (``["all"]`` or one study); ``done``: the studies whose
    files are written so far, for the line of a reproduction a signal stopped."""
    names: list[str]
    out_dir: Path
    level: str
    seeds: int
    jobs: int | None = None
    ray: str | None = None
    resume: bool = False
    done: list[str] = field(default_factory=list)

    @property
    def order(self) -> list[str]:
        """The studies in the order they run."""
        return list(STUDIES) if self.names == ["all"] else list(self.names)

    def run(self, *, progress: bool = False, on_study: Callable[[StudyResult], None] | None = None,
            warn: Callable[[str], None] | None = None) -> list[StudyResult]:
        """:func:`reproduce` with the plan's options, each study's name added to
        :attr:`done` as its files are written. An error of a Ray cluster that died says
        what the journal keeps of the runs completed (they need not run again)."""
        def study_done(res: StudyResult) -> None:
            self.done.append(res.study)
            if on_study:
                on_study(res)

        try:
            return reproduce(self.names, self.out_dir, level=self.level, seeds=self.seeds, jobs=self.jobs,
                             ray=self.ray, progress=progress, resume=self.resume, on_study=study_done, warn=warn)
        except ClusterError as e:
            n = journaled_runs(self.out_dir)
            if e.kept is None and n:
                e.kept = f"{n} completed runs in {self.out_dir / JOURNAL} (continue with --resume)"
            raise

    def study_summary(self, res: StudyResult) -> str:
        """The line of a study whose files are written: its published numbers, the
        verdicts, its runs (those the journal gave) and the page to read."""
        resumed = f" (and {res.resumed} from runs.jsonl)" if res.resumed else ""
        return (f"{res.study}: {len(res.rows)} published numbers; {res.counts_line()}; "
                f"{res.runs} runs{resumed} in {res.wall_s:.0f} s; wrote {self.out_dir / (res.study + '.md')}")

    def kept(self) -> str:
        """What a reproduction a signal stopped leaves: the studies whose files are written
        (with the report of them), the one whose files are not, and the completed runs the
        journal keeps for ``resume``."""
        order, done, out = self.order, self.done, self.out_dir
        if len(done) == len(order):
            return f"reproduce complete; {len(done)} studies written to {out}"
        stopped = f"reproduce stopped during {order[len(done)]}, whose files are not written"
        n = journaled_runs(out)
        runs = f"; {n} completed runs kept in {out / JOURNAL} (continue with --resume)" if n else ""
        if not done:
            return f"{stopped}; no study files written in {out}{runs}"
        return f"{stopped}; kept {', '.join(done)} in {out}, with report.html{runs}"

    def build_note(self) -> str | None:
        """That this engine is a plain build, where the source tree it was installed from
        (an editable install; a wheel has none) can rebuild it profile-guided, with the
        same results about 12 % sooner: worth it before a reproduction of minutes or hours.
        None for seconds-long smoke runs, runs on a Ray cluster (its workers have their own
        engine) and a profile-guided engine."""
        build_pgo = Path(__file__).resolve().parents[3] / "scripts" / "build-pgo.sh"
        if self.level == "smoke" or self.ray is not None or not build_pgo.is_file():
            return None
        from hetsched import sim

        if sim.PROFILE_GUIDED:
            return None
        return (f"this engine is a plain build; {build_pgo} rebuilds it profile-guided, with the same results "
                "about 12 % sooner (docs/speed.md)")


def plan_reproduction(study: str, out_dir: Path, *, level: str = "quick", seeds: int = 0, jobs: int | None = None,
                      ray: str | None = None, resume: bool = False) -> ReproductionPlan:
    """A reproduction of ``study`` (a name of :data:`STUDIES`, or ``all``) into
    ``out_dir``, an unknown name refused before anything runs; ``seeds`` 0: the level's
    :data:`DEFAULT_SEEDS`. The output directory is the caller's to check."""
    names = ["all"] if study == "all" else [study]
    if study != "all":
        study_module(study)  # an unknown name is refused before anything runs
    return ReproductionPlan(names, Path(out_dir), level, seeds or DEFAULT_SEEDS[level], jobs=jobs, ray=ray,
                            resume=resume)
