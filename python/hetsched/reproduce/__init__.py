"""`hetsched reproduce`: the five studies' evaluations rebuilt on the simulator, beside
their published tables (docs/reproduce.md).

>>> from hetsched.reproduce import reproduce                       # doctest: +SKIP
>>> reproduce(["fa-cfs"], out_dir=Path("out"), level="quick", seeds=3)  # doctest: +SKIP

Every study module (``hetsched.reproduce.<module>``) has ``STUDY``, ``TITLE``, ``PAPER``
and ``run(ctx) -> StudyResult``.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Callable, Sequence

from hetsched.errors import HetschedError, UnknownNameError
from hetsched.outputs import OutputSet, os_error
from hetsched.reproduce.core import Context, Row, Run, Runner, StudyResult, read_study, run_times_csv, study_files
from hetsched.reproduce.journal import JOURNAL, RunJournal
from hetsched.runner import OutLock, remove_dead_temporaries, uninterrupted

__all__ = ["STUDIES", "reproduce", "run_study", "Context", "Row", "Run", "Runner", "StudyResult"]

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
