"""Arm's OSPM 2020 talk on vendor EAS changes ("EAS scheduler changes"), rebuilt: each
vendor change to EAS alone against mainline EAS, on the Pixel 4's SoC, with the slides'
statistics.

The slides measure every change on a Google Pixel 4 (Snapdragon 855 = ``sm8150``): PCMark
Work 2.0 sub-scores over 100 runs, CPU-rail energy over 10 runs, a Wilcoxon signed-rank
test per metric, and results with p > 0.01 excluded (not drawn). Here each ``vendor.*``
knob of the ``eas`` scheduler runs alone against plain ``eas`` (schedutil), paired by seed,
on the PCMark-like ``pcmark`` suite with ``phone-mix`` beside it (Android's threads; its
SCHED_FIFO audio mixer is the only RT task, which ``vendor.rt_placement`` needs), in a
fixed 4 s window. Per metric: the per-seed relative change (%), its mean with a 95 %
interval, its median and the two-sided Wilcoxon p. The verdict on each published change
follows ``core.judge`` on that interval; the slides' own criterion (p <= 0.01) decides only
which published changes are within the slides' noise (not decidable) and is kept in the
notes. docs/studies/ospm2020.md has the choices and the results.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

from hetsched.reproduce.core import (AGREES, DISAGREES, INCONCLUSIVE, NOT_DECIDABLE, Context, Row, Run,
                                     StudyResult, change_text, counts_text, flat_metrics, mean_ci, row_from,
                                     verdict_counts, wilcoxon_p)

__all__ = ["STUDY", "TITLE", "PAPER", "run", "min_pairs", "Cell", "paired_cell", "significance",
           "PUBLISHED", "CHANGES", "METRICS", "PIXEL4_INIT", "CORE_CTL_KERNEL_DEFAULTS", "UNDECIDABLE",
           "published_row"]

STUDY = "ospm2020"
TITLE = "Arm OSPM 2020: vendor changes to EAS, one by one against mainline EAS"
PAPER = "Arm, \"EAS scheduler changes\", OSPM 2020 talk slides (read from their OCR text)"

ALPHA = 0.01            # slide "Setup": "P-value > 0.01 excluded"
PLATFORM = "sm8150"     # the Pixel 4's SoC
# A published change the slides' own test called no change is within the slides' noise
UNDECIDABLE = "the slides' Wilcoxon test found no significant change (p > 0.01)"
# The Pixel 4 ran Google's android-msm-coral-4.14, Qualcomm's Android 4.14 line (EAS,
# schedtune, Qualcomm's schedutil). Its floral_defconfig (aosp-mirror/kernel_msm 00226042,
# GrapheneOS-Archive/kernel_msm-coral 00024f47) sets neither CONFIG_SCHED_WALT nor
# CONFIG_SCHED_CORE_CTL (both "bool" without a default in its init/Kconfig), and CONFIG_HZ_300:
# the phone tracked load with PELT and had no core_ctl. That build is msm-4.14 with
# sched_walt 0 (docs/mechanisms/walt.md), at a 300 Hz tick.
KERNEL = "msm-4.14"
PIXEL4_BUILD: dict[str, float] = {"sched_walt": 0, "tick_hz": 300}
# What the Pixel 4 writes at boot: LineageOS/android_device_google_coral, branch lineage-17.1
# (Android 10, the slides' time), commit 5b5a5d8c, init.hardware.rc lines 106-118
# ("write /sys/devices/system/cpu/cpu{0,4,7}/cpufreq/schedutil/up_rate_limit_us 500",
# "... down_rate_limit_us 20000") and 127-130 ("write /dev/stune/foreground/
# schedtune.prefer_idle 1", "write /dev/stune/top-app/schedtune.boost 10",
# "write /dev/stune/top-app/schedtune.prefer_idle 1"). It writes no hispeed_freq or pl
# (the kernel's 0), where the sm8150 profile defaults carry Qualcomm's reference script; the
# slides' baseline is EAS without the vendor changes, so every vendor knob is 0 except the
# one a change turns on.
PIXEL4_SCHEDUTIL: dict[str, float] = {
    "schedutil.up_rate_limit_us": 500, "schedutil.down_rate_limit_us": 20_000,
    "schedutil.down_rate_limit_us.cluster0": 20_000,
}
PIXEL4_MSM: dict[str, float] = {
    "schedutil.hispeed_freq.cluster0": 0, "schedutil.hispeed_freq.cluster1": 0,
    "schedutil.hispeed_freq.cluster2": 0, "schedutil.pl": 0,
    "schedtune.top-app.boost": 10, "schedtune.top-app.prefer_idle": 1,
    "schedtune.foreground.prefer_idle": 1,
}
# core_ctl: no file of the Pixel 4's device tree writes a core_ctl value (git grep
# "core_ctl" over every branch of LineageOS/android_device_google_coral, lineage-17.0 to
# lineage-22.0, and its history: no match); init.hardware.rc lines 95-103 write instead
# "# bring back all cores" / "write /sys/devices/system/cpu/cpuN/online 1" for CPUs 0-7, and
# init.power.rc writes bus and idle settings only. So core_ctl keeps the kernel's own values
# (core_ctl.c cluster_init(): enable true, min_cpus 1, max_cpus all, offline_delay_ms 100,
# task_thres and nr_prev_assist_thresh UINT_MAX, busy thresholds 0 until written), with
# which every CPU counts as busy and none is isolated.
SM8150_CLUSTERS = 3
CORE_CTL_KERNEL_DEFAULTS: dict[str, float] = {
    f"core_ctl.{param}.cluster{c}": value
    for c in range(SM8150_CLUSTERS)
    for param, value in (("enable", 1), ("min_cpus", 1), ("max_cpus", -1), ("busy_up_thres", 0),
                         ("busy_down_thres", 0), ("task_thres", 1e10), ("nr_prev_assist_thresh", -1),
                         ("offline_delay_ms", 100))
}
PIXEL4_INIT: dict[str, float] = {**PIXEL4_BUILD, **PIXEL4_SCHEDUTIL, **PIXEL4_MSM, **CORE_CTL_KERNEL_DEFAULTS}
WORKLOAD = ("pcmark", "phone-mix")
# The slides do not say what ran beside PCMark or over what time energy was taken; chosen
# before any result: phone-mix (a phone's own threads; its RT mixer lets the RT change act)
# and 4 s: pcmark beside phone-mix ends after 3.0-3.4 s on sm8150 (3 of 36 runs were still
# going at 3.0 s, none at 3.4 s). A run whose suite did not finish is dropped with its pair.
WINDOW_S = 4.0
UNIT_PCT = "% change vs mainline EAS"


@dataclass(frozen=True)
class Change:
    key: str        # short name used in labels
    knob: str       # the eas knob
    slide: str      # the slides' name for it
    counter: str    # counters.vendor.<counter>: how often it fired


# the slides' order: "1. CPU Isolation", then the four panels of the results slide
CHANGES: tuple[Change, ...] = (
    Change("cpu_isolation", "vendor.cpu_isolation", "1. CPU Isolation", "cpu_isolation"),
    Change("migration_margins", "vendor.migration_margins", "vendor migration margins", "migration_margins"),
    Change("prev_cpu_fastpath", "vendor.prev_cpu_fastpath", "vendor prev_cpu fastpath", "prev_cpu_fastpath"),
    Change("rt_placement", "vendor.rt_placement", "vendor RT energy aware", "rt_placement"),
    Change("task_packing", "vendor.task_packing", "vendor task packing", "task_packing"),
)
CHANGE = {c.key: c for c in CHANGES}

# (the slides' metric name, the simulated metric). PcmaDataManipulationScore is on no slide
# (no legend lists it) but the suite has the test, so it is simulated and shown, not compared.
METRICS: tuple[tuple[str, str], ...] = (
    ("PcmaWebV2Score", "pcmark.web_score"),
    ("PcmaVideoEditingScore", "pcmark.video_score"),
    ("PcmaWritingV2Score", "pcmark.writing_score"),
    ("PcmaPhotoEditingV2Score", "pcmark.photo_score"),
    ("PcmaDataManipulationScore", "pcmark.data_score"),
    ("PcmaWorkv2Score", "pcmark.score"),
    ("CPU_power", "energy_j"),
)
SHORT = {"pcmark.web_score": "web", "pcmark.video_score": "video", "pcmark.writing_score": "writing",
         "pcmark.photo_score": "photo", "pcmark.data_score": "data", "pcmark.score": "work (overall)",
         "energy_j": "CPU energy"}


@dataclass(frozen=True)
class Published:
    """One number read off the slides. ``paper_sign``: the direction the slides report
    (every drawn bar passed p <= 0.01, so its sign is the published direction; 0 = no
    significant change, which is within the slides' noise); None for a count, which has no
    direction."""

    table: str
    change: str
    metric: str       # the slides' label
    sim_key: str      # what it is compared with (a metric, or counters.vendor.X)
    unit: str
    value: float | None
    paper_sign: int | None
    note: str


# the OCR text: ../shared/papers/003_fbdc5870143e6e43.txt, lines 170-221
_OCR = "OCR of the results slide: "
RESULTS = "Results slide (PCMark 100 runs, CPU rails 10 runs)"
ISOLATION = "Slide '1. CPU Isolation'"
COUNTS = "Slides '3. Packing' / '4. Fastpath'"

# No row sets paper_noise (core.Row; docs/reproduce.md, "Magnitude"): the slides state how
# many runs ("PCMark Benchmark. * 100 runs." / "Power measurement made on the PMIC CPU rails.
# * 10 runs.", slide "Setup") and the test ("Wilcoxon signed rank test p-value * P-value > 0.01
# excluded"), but no spread of any change they print; the only "+/-" figures ("Triggered 16k+/-
# 900 per PCMark run", "Triggered 500k +-4 per PCMark run") are trigger counts, rows with no
# baseline and so no verdict. Every % change is weighed by the factor of 2.
# Transcribed from the OCR text of the slides (docs/studies/ospm2020.md has the reading).
# The results slide is a 2x2 bar chart, one panel per change (migration margins | prev_cpu
# fastpath over RT energy aware | task packing), one bar per metric that passed p <= 0.01,
# labelled with its % change; a first build shows the PCMark scores only (its legend has no
# CPU_power), a second adds CPU_power. Which panel and which metric a label belongs to is
# not always legible; each row's note says what is certain.
PUBLISHED: tuple[Published, ...] = (
    # lines 170-174: "vendor migration margins vendor prev_cpu fastpath / metric /
    # 3.32 W PcmaWritingV2Score / 2.35 B PcmaWorkv2Score": the two labels of the top row,
    # on the lines of the legend's first two entries. Seaborn orders a legend by first
    # appearance in the data, so the first panel (migration margins) holds the first two
    # metrics; the prev_cpu fastpath panel is the other possible reading.
    Published(RESULTS, "migration_margins", "PcmaWritingV2Score", "pcmark.writing_score", UNIT_PCT, 3.32, 1,
              _OCR + "'3.32' beside the legend entry PcmaWritingV2Score in the top row, build 1 (scores only); "
              "the panel (migration margins, else prev_cpu fastpath) is inferred from the legend order."),
    Published(RESULTS, "migration_margins", "PcmaWorkv2Score", "pcmark.score", UNIT_PCT, 2.35, 1,
              _OCR + "'2.35' beside the legend entry PcmaWorkv2Score in the top row, build 1 (scores only); "
              "panel inferred as for 3.32."),
    # line 196: "-0.67 -0.6", on one line below the top row's titles, only in build 2 (which
    # adds CPU_power): two energy bars side by side, left panel then right panel
    Published(RESULTS, "migration_margins", "CPU_power", "energy_j", UNIT_PCT, -0.67, -1,
              _OCR + "'-0.67 -0.6' on one line of the top row, only in build 2 (the build that adds "
              "CPU_power): read as the left panel's energy bar; which panel holds which of the two is uncertain."),
    Published(RESULTS, "prev_cpu_fastpath", "CPU_power", "energy_j", UNIT_PCT, -0.6, -1,
              _OCR + "the right-hand value of '-0.67 -0.6' (build 2, top row); it could also be an axis "
              "tick label (one decimal where the bar labels have two)."),
    # lines 189-190 and 202-205 (build 2): "vendor RT energy aware / 0.83" and "vendor task
    # packing / I / -0.57", both already in build 1 (scores only): a score bar each, but
    # which score is not legible; compared with the suite's overall score
    Published(RESULTS, "rt_placement", "a PCMark score (which is illegible)", "pcmark.score", UNIT_PCT, 0.83, 1,
              _OCR + "'0.83' under the 'vendor RT energy aware' title, in both builds (so a score); its "
              "metric is illegible: compared with the overall score (PcmaWorkv2Score)."),
    Published(RESULTS, "task_packing", "a PCMark score (which is illegible)", "pcmark.score", UNIT_PCT, -0.57, -1,
              _OCR + "'-0.57' under the 'vendor task packing' title, in both builds (so a score); its "
              "metric is illegible: compared with the overall score (PcmaWorkv2Score)."),
    # lines 115-129: legend "PcmaWritingV2Score", "energy-estimate" ("Based on: CPU
    # Frequencies, CPU Idle states"), one number "0.012515318690073973" and "%"
    Published(ISOLATION, "cpu_isolation", "PcmaWritingV2Score", "pcmark.writing_score", UNIT_PCT,
              0.012515318690073973, 0,
              "OCR of slide '1. CPU Isolation' (lines 115-129): the only number is '0.012515318690073973' "
              "beside the metrics PcmaWritingV2Score and energy-estimate, then '%'. Read as a writing-score "
              "change of +0.0125 %; it may instead be a Wilcoxon p of 0.0125 (> 0.01, excluded). Either "
              "reading says: no significant change."),
    Published(ISOLATION, "cpu_isolation", "energy-estimate", "energy_j", UNIT_PCT, None, None,
              "The slide plots an energy-estimate (from CPU frequencies and idle states, not the CPU rails) "
              "but no value of it is legible in the OCR; the simulated change is shown without a paper value."),
    # line 133: "Triggered 16k+/- 900 per PCMark run"; line 155: "Triggered 500k +-4 per PCMark run"
    Published(COUNTS, "task_packing", "times triggered per PCMark run", "counters.vendor.task_packing",
              "count per run", 16_000.0, None,
              "Slide '3. Packing tasks on active CPU': 'Triggered 16k+/- 900 per PCMark run'."),
    Published(COUNTS, "prev_cpu_fastpath", "times triggered per PCMark run", "counters.vendor.prev_cpu_fastpath",
              "count per run", 500_000.0, None,
              "Slide '4. Fastpath for prev_cpu': 'Triggered 500k +-4 per PCMark run' (the spread is "
              "illegible: probably +-4k)."),
)


@dataclass(frozen=True)
class Config:
    """One set of runs: the study's own or one value of a parameter the slides leave open."""

    name: str
    workload: tuple[str, ...]
    kernel: str
    window_s: float
    knobs: tuple[tuple[str, float], ...]
    parameter: str = ""   # the open parameter this configuration varies ("" = the study's)
    value: str = ""       # its value here, as the sensitivity table prints it
    changes: tuple[str, ...] = tuple(c.knob for c in CHANGES)


# The slides put each vendor change beside mainline ("5. RT Capacity Awareness": "Mainline"
# beside "Vendor"; the results slide, one panel per change), so msm-4.14's own wakeup path,
# find_best_target() (sched_feat FIND_BEST_TARGET, which already carries a prev_cpu fast
# path, packing and the migration margins), is off: the baseline is mainline's feec on the
# Pixel 4's kernel, and every change runs on that same profile and fair class.
VENDOR_OFF = (("vendor.cpu_isolation", 0), ("vendor.migration_margins", 0), ("vendor.task_packing", 0),
              ("vendor.prev_cpu_fastpath", 0), ("vendor.rt_placement", 0), ("eas.find_best_target", 0))
_PIXEL4 = tuple(PIXEL4_INIT.items()) + VENDOR_OFF
# the same values on the tree built with WALT (and core_ctl), as the LG G8 shipped it
_PIXEL4_ON_WALT = tuple({**PIXEL4_INIT, "sched_walt": 1}.items()) + VENDOR_OFF
# another kernel profile has no schedtune, hispeed or pl: the device's rate limits and
# core_ctl's kernel values only
_PIXEL4_GENERIC = tuple({**PIXEL4_SCHEDUTIL, **CORE_CTL_KERNEL_DEFAULTS}.items()) + VENDOR_OFF

BACKGROUND = "background load beside PCMark"
WINDOW = "run window (s)"
KERNEL_PROFILE = "kernel profile"

PRIMARY = Config("sm8150, pcmark + phone-mix, the Pixel 4's kernel and values, 4 s", WORKLOAD, KERNEL,
                 WINDOW_S, _PIXEL4)
# the values the slides leave open, each at two values besides the chosen one
SENSITIVITY: tuple[Config, ...] = (
    Config("pcmark alone", ("pcmark",), KERNEL, WINDOW_S, _PIXEL4, BACKGROUND, "none (pcmark alone)"),
    Config("pcmark + phone-mix at twice its load", ("pcmark", "phone-mix:load=2"), KERNEL, WINDOW_S, _PIXEL4,
           BACKGROUND, "phone-mix at load 2"),
    Config("3.5 s window", WORKLOAD, KERNEL, 3.5, _PIXEL4, WINDOW, "3.5"),
    Config("6 s window", WORKLOAD, KERNEL, 6.0, _PIXEL4, WINDOW, "6"),
    Config("msm-4.14 built with WALT and core_ctl", WORKLOAD, KERNEL, WINDOW_S, _PIXEL4_ON_WALT,
           KERNEL_PROFILE, "msm-4.14 with WALT (the LG G8's build)"),
    Config("android-4.19 (EAS on PELT, uclamp)", WORKLOAD, "android-4.19", WINDOW_S, _PIXEL4_GENERIC,
           KERNEL_PROFILE, "android-4.19"),
)
CHOSEN_VALUE = {BACKGROUND: "phone-mix", WINDOW: f"{WINDOW_S:g}",
                KERNEL_PROFILE: "msm-4.14 without WALT (the Pixel 4's build)"}
# core_ctl as Qualcomm's Snapdragon 855 reference script sets it (the sm8150 profile's
# defaults): what CPU isolation does where a device writes thresholds. Only the isolation
# change runs (its baseline, with core_ctl off, is the study's own).
CORE_CTL_REFERENCE = Config("core_ctl at the Snapdragon 855 reference script's values", WORKLOAD, KERNEL, WINDOW_S,
                            tuple({**PIXEL4_SCHEDUTIL, **PIXEL4_MSM, "sched_walt": 1}.items()) + VENDOR_OFF,
                            changes=("vendor.cpu_isolation",))


# ----------------------------------------------------------------------------- statistics

def min_pairs(alpha: float = ALPHA) -> int:
    """The fewest pairs with which a two-sided exact Wilcoxon signed-rank test can reach
    p <= alpha: the smallest p of n pairs is 2 / 2^n (every difference of one sign)."""
    n = 1
    while 2.0 / 2 ** n > alpha:
        n += 1
    return n


def significance(p: float | None, alpha: float = ALPHA) -> str:
    """The slides' marking: a change is kept at p <= alpha and excluded above."""
    if p is None:
        return "identical in every pair"
    return f"significant (p <= {alpha:g})" if p <= alpha else f"not significant (p > {alpha:g})"


@dataclass
class Cell:
    """One change x metric: the per-seed relative changes (%) and the test."""

    changes: list[float]
    p: float | None
    n: int
    dropped: int = 0  # pairs dropped because a run's suite did not finish

    @property
    def mean(self) -> float:
        return mean_ci(self.changes)[0] if self.changes else math.nan

    @property
    def median(self) -> float:
        return statistics.median(self.changes) if self.changes else math.nan

    @property
    def significant(self) -> bool:
        return self.p is not None and self.p <= ALPHA

    @property
    def sign(self) -> int:
        """The direction the slides' method would report: 0 unless significant."""
        if not self.significant:
            return 0
        m = self.mean
        return 0 if m == 0 else (1 if m > 0 else -1)


def paired_cell(base: Sequence[dict], new: Sequence[dict], key: str) -> Cell:
    """Relative change of ``key`` from ``base`` to ``new`` (paired by position = seed), and
    the two-sided Wilcoxon p; pairs where either run's suite did not finish are dropped."""
    a, b, dropped = [], [], 0
    for x, y in zip(base, new):
        if x.get("pcmark.complete", 1.0) != 1.0 or y.get("pcmark.complete", 1.0) != 1.0:
            dropped += 1
            continue
        a.append(float(x[key]))
        b.append(float(y[key]))
    changes = [100.0 * (y - x) / x for x, y in zip(a, b)]
    p = wilcoxon_p(a, b) if a else None
    return Cell(changes, p, len(a), dropped)


def _fmt_p(p: float | None) -> str:
    return "—" if p is None else (f"{p:.2g}" if p >= 1e-3 else f"{p:.1e}")


def _pct(x: float | None) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:+.2f} %"


# ----------------------------------------------------------------------------- the study

@dataclass
class Sizes:
    scores: int   # runs per configuration whose scores are compared (the slides: 100)
    energy: int   # the first of them whose energy is compared (the slides: 10)


def sizes(ctx: Context) -> Sizes:
    """Runs per level. full: the slides' 10 : 1 (``--seeds`` 10 gives their 100 PCMark runs
    and 10 energy runs). quick: as many energy runs as a Wilcoxon test needs to ever reach
    p <= 0.01 (8), at least ``--seeds``, and ten times that for the scores (a run takes
    10-40 ms, so 80 pairs cost seconds). smoke: ``--seeds`` runs of everything. Every
    configuration of the sensitivity checks runs as many."""
    floor = min_pairs(ALPHA)
    n_e = ctx.pick(ctx.seeds, max(ctx.seeds, floor), ctx.seeds)
    n_s = ctx.pick(ctx.seeds, 10 * n_e, 10 * n_e)
    return Sizes(scores=n_s, energy=n_e)


def measure(*, seed: int, platform: str, workload: tuple[str, ...], kernel: str, knob: str | None,
            window_s: float | None, knobs: tuple[tuple[str, float], ...] = ()) -> dict:
    """One run of the study, in a worker: what ``Run.sim`` returns (the flat metrics of
    ``core.flat_metrics``, without the energy lower bound, which this study does not use),
    plus each cluster's energy and mean frequency for the notes' explanations."""
    from hetsched import sim as sim_module

    run_knobs: dict = {"kernel": kernel, **dict(knobs)}
    if knob:
        run_knobs[knob] = 1
    s = sim_module.Simulation(platform=platform, workload=list(workload), scheduler="eas", governor="schedutil",
                              knobs=run_knobs, seed=seed, lower_bound=False)
    doc = s.run(window_s).doc
    out = flat_metrics(doc)
    # where the energy went, for the notes' explanations: per cluster, its energy and its
    # CPUs' time-weighted mean frequency
    for c in doc["clusters"]:
        out[f"cluster.{c['cluster']}.energy_j"] = float(c["energy_j"])
    for name in {c["cluster"] for c in doc["cpus"]}:
        cpus = [c for c in doc["cpus"] if c["cluster"] == name]
        res = [(float(f), t) for c in cpus for f, t in c["freq_residency_s"].items()]
        total = sum(t for _, t in res)
        out[f"cluster.{name}.mean_mhz"] = sum(f * t for f, t in res) / total / 1e3 if total else 0.0
    return out


def _runs(cfg: Config, knob: str | None, n: int) -> list[Run]:
    return [Run.call(f"{__name__}:measure", seed=s, platform=PLATFORM, workload=cfg.workload,
                     kernel=cfg.kernel, knob=knob, window_s=cfg.window_s, knobs=cfg.knobs,
                     label=f"{STUDY}: {cfg.name}, {knob or 'mainline eas'}, seed {s}")
            for s in range(n)]


def _grid(results: dict[str | None, list[dict]], sz: Sizes) -> dict[tuple[str, str], Cell]:
    """change x metric -> Cell; scores over the first ``sz.scores`` pairs, energy over the
    first ``sz.energy`` (the slides measure energy on fewer runs)."""
    out = {}
    base = results[None]
    for c in CHANGES:
        if c.knob not in results:
            continue
        new = results[c.knob]
        for _, key in METRICS:
            n = sz.energy if key == "energy_j" else sz.scores
            out[(c.key, key)] = paired_cell(base[:n], new[:n], key)
    return out


def _fired(results: dict[str | None, list[dict]], change: str, n: int) -> float:
    """Mean times per run the change fired (counters.vendor.<counter>)."""
    c = CHANGE[change]
    return statistics.mean(float(r[f"counters.vendor.{c.counter}"]) for r in results[c.knob][:n])


def published_row(pub: Published, grid: dict[tuple[str, str], Cell], results: dict[str | None, list[dict]],
                  sz: Sizes, *, swap_top_row: bool = False) -> Row:
    """The row of one published number. A % change: the per-pair changes' interval judged by
    core.judge (``pct``), "not decidable" where the slides' test found no significant change;
    the Wilcoxon p stays in the note. A count: the simulated count, with no verdict (the
    slides' count has no baseline to make it a change). ``swap_top_row``: 3.32 / 2.35 read
    as the prev_cpu fastpath panel's (the other reading of the OCR)."""
    change = pub.change
    if swap_top_row and change == "migration_margins" and pub.sim_key != "energy_j":
        change = "prev_cpu_fastpath"
    ch = CHANGE[change]
    label = f"{ch.slide} (`{ch.knob}`)"
    if pub.sim_key.startswith("counters."):
        vals = [float(r[pub.sim_key]) for r in results[ch.knob][:sz.scores]]
        m = statistics.mean(vals)
        note = (f"{pub.note} Here {m:.0f} per {WINDOW_S:g} s run (pcmark beside phone-mix), "
                f"{m / pub.value:.2g} x the slides' count: the PCMark-like suite and phone-mix wake tasks "
                "about 2 000 times per run where the real suite does about 500 000 (not comparable in size).")
        return row_from(pub.table, label, pub.metric, pub.unit, pub.value, vals, note=note)
    cell = grid[(change, pub.sim_key)]
    what = "energy over the first" if pub.sim_key == "energy_j" else "scores over"
    stat = (f"Simulated: mean of the per-pair change, {what} {cell.n} paired runs; median {cell.median:+.2f} %; "
            f"Wilcoxon p = {_fmt_p(cell.p)} ({significance(cell.p)}, the slides' criterion, for information: "
            f"the verdict is the interval's); {ch.key} fired {_fired(results, change, sz.scores):.0f} times per run")
    if cell.dropped:
        stat += f"; {cell.dropped} pair(s) dropped (the suite did not finish in the window)"
    note = f"{pub.note} {stat}."
    undecidable = UNDECIDABLE if pub.paper_sign == 0 else ""
    return row_from(pub.table, label, pub.metric, pub.unit, pub.value, cell.changes, note=note,
                    undecidable=undecidable, pct=True)


def run(ctx: Context) -> StudyResult:
    sz = sizes(ctx)
    configs = [PRIMARY, *SENSITIVITY, CORE_CTL_REFERENCE]
    plan: list[tuple[Config, str | None, list[Run]]] = []
    for cfg in configs:
        knobs = ([None] if cfg is not CORE_CTL_REFERENCE else []) + list(cfg.changes)
        for knob in knobs:
            plan.append((cfg, knob, _runs(cfg, knob, sz.scores)))
    # every run is independent: one call, so the pool keeps every worker busy throughout
    flat = ctx.runner.run([r for _, _, rs in plan for r in rs], label=f"{STUDY}: {sum(len(rs) for *_, rs in plan)} runs")
    results: dict[str, dict[str | None, list[dict]]] = {}
    i = 0
    for cfg, knob, rs in plan:
        results.setdefault(cfg.name, {})[knob] = flat[i:i + len(rs)]
        i += len(rs)
    # the reference values' isolation runs against the study's own baseline (core_ctl off
    # in both, so the baseline does not depend on its values)
    results[CORE_CTL_REFERENCE.name][None] = results[PRIMARY.name][None]

    prim = results[PRIMARY.name]
    grid = _grid(prim, sz)
    rows = [published_row(p, grid, prim, sz) for p in PUBLISHED]
    sens_grids = {cfg.name: _grid(results[cfg.name], sz) for cfg in SENSITIVITY}
    sens_rows = {cfg.name: [published_row(p, sens_grids[cfg.name], results[cfg.name], sz) for p in PUBLISHED]
                 for cfg in SENSITIVITY}
    ref_grid = _grid(results[CORE_CTL_REFERENCE.name], sz)
    swapped = [published_row(p, grid, prim, sz, swap_top_row=True) for p in PUBLISHED]

    sensitivity = _sensitivity(rows, sens_rows)
    plots = [_plot_changes(ctx, grid, sz), _plot_sensitivity(ctx, rows, sens_rows)]
    notes = _notes(rows, grid, prim, sz, sens_grids, sens_rows, ref_grid, results[CORE_CTL_REFERENCE.name], swapped)
    platforms = (f"`{PLATFORM}` (Qualcomm Snapdragon 855, the Pixel 4's SoC: the slides' phone, with its three "
                 "clusters, 4 silver + 3 gold + 1 prime, the little/mid/big of the slides' setup plot, and its "
                 "device-tree OPPs; its power model is estimated, so the energy rows are indicative).")
    return StudyResult(STUDY, TITLE, PAPER, platforms, rows, plots, notes,
                       finding=_finding(rows, grid, prim, sz),
                       calibrations=_calibrations(sz), sensitivity=sensitivity)


def _sensitivity(rows: list[Row], sens_rows: dict[str, list[Row]]) -> list[dict]:
    out = []
    for param in (BACKGROUND, WINDOW, KERNEL_PROFILE):
        out.append({"parameter": param, "value": CHOSEN_VALUE[param], "chosen": True,
                    "counts": verdict_counts(rows)})
        for cfg in SENSITIVITY:
            if cfg.parameter == param:
                out.append({"parameter": param, "value": cfg.value, "chosen": False,
                            "counts": verdict_counts(sens_rows[cfg.name])})
    return out


def _calibrations(sz: Sizes) -> list[tuple[str, str, str]]:
    return [
        ("platform", f"`{PLATFORM}` (Snapdragon 855)", "Slide \"Setup\": \"Google Pixel4\" (the Pixel 4's SoC is "
         "the Snapdragon 855)."),
        ("score pairs", f"{sz.scores} at this level (full: 10 x --seeds, 100 at the default 10)",
         "Slide \"Setup\": \"Performance results: PCMark Benchmark. 100 runs.\""),
        ("energy pairs", f"the first {sz.energy} (full: --seeds, 10 at the default)",
         "Slide \"Setup\": \"Energy results: Power measurement made on the PMIC CPU rails. 10 runs.\""),
        ("which published changes are within the slides' noise", f"p > {ALPHA:g}: not decidable",
         "Slide \"Setup\": \"Statistics: Wilcoxon signed rank test p-value\", \"P-value > 0.01 excluded\"."),
        ("baseline", "plain `eas`, every `vendor.*` knob 0 and `eas.find_best_target` 0 (mainline's feec, "
                     "not msm-4.14's own path); each change alone",
         "Results slide: one panel per change (\"vendor migration margins\", ...); slide \"5. RT Capacity "
         "Awareness\": \"Mainline\" beside \"Vendor\"."),
        ("kernel", f"`{KERNEL}` with `sched_walt` 0 and `tick_hz` 300: EAS on PELT, schedtune, Qualcomm's "
         "schedutil on PELT, no core_ctl",
         "Slide \"Setup\": \"Google Pixel4\": its kernel is android-msm-coral-4.14, whose floral_defconfig "
         "(aosp-mirror/kernel_msm 00226042) sets CONFIG_SCHED_TUNE, CONFIG_DEFAULT_USE_ENERGY_AWARE and "
         "CONFIG_HZ_300 but neither CONFIG_SCHED_WALT nor CONFIG_SCHED_CORE_CTL."),
        ("schedutil rate limits", "up 500 µs, down 20 000 µs on every policy",
         "\"Google Pixel4\": init.hardware.rc (LineageOS/android_device_google_coral, lineage-17.1, 5b5a5d8c) "
         "lines 107-108, 112-113, 117-118: \"write /sys/devices/system/cpu/cpu0/cpufreq/schedutil/"
         "up_rate_limit_us 500\", \"... down_rate_limit_us 20000\" (cpu4, cpu7 likewise)."),
        ("schedtune", "top-app boost 10 and prefer_idle 1, foreground prefer_idle 1",
         "\"Google Pixel4\": init.hardware.rc lines 128-130: \"write /dev/stune/foreground/schedtune.prefer_idle "
         "1\", \"write /dev/stune/top-app/schedtune.boost 10\", \"write /dev/stune/top-app/schedtune.prefer_idle 1\"."),
        ("core_ctl (CPU isolation)", "the kernel's values on every cluster: enable 1, min_cpus 1, max_cpus all, "
         "busy_up_thres 0, busy_down_thres 0, task_thres and nr_prev_assist_thresh never, offline_delay_ms 100",
         "\"Google Pixel4\": no file of the device tree writes core_ctl (git grep over every branch, "
         "lineage-17.0 to 22.0, and the history: no match); init.hardware.rc lines 95-103 write instead "
         "\"# bring back all cores\" / \"write /sys/devices/system/cpu/cpu0/online 1\" (to cpu7), so "
         "core_ctl.c cluster_init()'s values stand (and the phone's kernel does not build core_ctl at all)."),
    ]


# ----------------------------------------------------------------------------- notes

# smallest cluster first, as the slides' setup plot lists little, mid, big
_CLUSTER_ORDER = {"silver": 0, "little": 0, "gold": 1, "mid": 1, "prime": 2, "big": 2}


def _clusters(results: Sequence[dict]) -> list[str]:
    names = {k.split(".")[1] for r in results for k in r if k.startswith("cluster.")}
    return sorted(names, key=lambda c: (_CLUSTER_ORDER.get(c, 9), c))


def _m(rs: Sequence[dict], k: str) -> float:
    return statistics.mean(float(r[k]) for r in rs)


def _where(base: Sequence[dict], new: Sequence[dict]) -> str:
    """Per cluster, mean energy (J) and mean frequency (MHz), base -> with the change; and
    the migrations and feec calls per run: what the explanations below rest on."""
    parts = []
    for c in _clusters(base):
        parts.append(f"{c} {_m(base, f'cluster.{c}.energy_j'):.2f} → {_m(new, f'cluster.{c}.energy_j'):.2f} J at "
                     f"{_m(base, f'cluster.{c}.mean_mhz'):.0f} → {_m(new, f'cluster.{c}.mean_mhz'):.0f} MHz")
    parts.append(f"migrations {_m(base, 'counters.migrations'):.0f} → {_m(new, 'counters.migrations'):.0f} per run")
    parts.append(f"feec calls {_m(base, 'counters.policy.feec_calls'):.0f} → "
                 f"{_m(new, 'counters.policy.feec_calls'):.0f} per run")
    return "; ".join(parts)


# The mechanism behind a change's simulated effect, as the engine models it; the measured
# figures are written beside it (_reason).
MECHANISM = {
    "migration_margins": (
        "the 95/85 % thresholds change a decision only when a task's util lies between 80 % and 95 % "
        "of a CPU's capacity; the knob changed {fired:.0f} placements or tick decisions per run."),
    "prev_cpu_fastpath": (
        "a task whose idle prev_cpu still fits stays there (often a silver CPU) where feec would have moved "
        "it; the engine charges feec a modelled cost per step, far below what the phone's ~500 000 wake-ups "
        "per run spend in it, so the placement change dominates: it fired {fired:.0f} times per run."),
    "rt_placement": (
        "the vendor order moves the SCHED_FIFO audio mixer (phone-mix's; the slides do not say which RT "
        "threads ran beside PCMark) to the least-utilised CPU; under msm-4.14 no uclamp pins it to the prime "
        "CPU. It fired {fired:.0f} times per run."),
    "task_packing": (
        "packing fired {fired:.0f} times per run here against the slides' 16k; once two tasks share a CPU its "
        "next window is busier and schedutil raises the OPP."),
}


def _reason(change: str, prim: dict, sz: Sizes) -> str:
    c = CHANGE[change]
    base, new = prim[None][:sz.energy], prim[c.knob][:sz.energy]
    text = MECHANISM[change].format(fired=_fired(prim, change, sz.scores))
    return f"{text[0].upper()}{text[1:]} Measured over the energy runs: {_where(base, new)}."


def _null_change(grid: dict, prim: dict, sz: Sizes) -> dict:
    """CPU isolation at the kernel's core_ctl values isolates nothing: what turning a vendor
    knob on changes by itself (the eas vendor path against mainline's)."""
    score, energy = grid[("cpu_isolation", "pcmark.score")], grid[("cpu_isolation", "energy_j")]
    iso = prim["vendor.cpu_isolation"][:sz.scores]
    base = prim[None][:sz.scores]
    return {"isolations": _m(iso, "counters.vendor.cpu_isolation"),
            "evaluations": _m(iso, "counters.vendor.core_ctl_evaluations"),
            "score": score, "energy": energy,
            "feec_base": _m(base, "counters.policy.feec_calls"), "feec_new": _m(iso, "counters.policy.feec_calls")}


def _null_identical(nul: dict) -> bool:
    """Whether the null change left every score and energy pair identical to mainline's (as a
    change that never fires must)."""
    return nul["score"].p is None and nul["energy"].p is None


def _beyond_null(grid: dict, change: str, key: str) -> Cell:
    """Per pair, the change's % change minus the null change's (CPU isolation that isolates
    nothing), both against the same mainline run: what the change does beyond turning the
    vendor path on."""
    a, b = grid[(change, key)], grid[("cpu_isolation", key)]
    n = min(len(a.changes), len(b.changes))
    return Cell([x - y for x, y in zip(a.changes[:n], b.changes[:n])], None, n)


def _no_schedtune_null(sens_grids: dict) -> str:
    """The null change under the profiles without schedtune (no prefer_idle task)."""
    same = [cfg.value for cfg in SENSITIVITY if cfg.parameter == KERNEL_PROFILE
            and all(c.p is None for (k, _), c in sens_grids[cfg.name].items() if k == "cpu_isolation")]
    if not same:
        return ""
    return (f"Under {' and '.join(same)}, which have no schedtune and so no prefer_idle task, the same null change "
            "leaves every pair identical. ")


def _interval(cell: Cell) -> str:
    m, lo, hi = mean_ci(cell.changes)
    if math.isnan(m):
        return "—"
    if math.isnan(lo):
        return f"{m:+.2f} %"
    return f"{m:+.2f} % [{lo:+.2f}, {hi:+.2f}]"


def _finding(rows: list[Row], grid: dict, prim: dict, sz: Sizes) -> str:
    c = verdict_counts(rows)
    judged = sum(c.values())
    dis = [r for r in rows if r.verdict == DISAGREES]
    agr = [r for r in rows if r.verdict == AGREES]
    nul = _null_change(grid, prim, sz)
    names = lambda rs: "; ".join(f"{r.row.split(' (')[0]} / {r.metric}" for r in rs)  # noqa: E731
    s1 = (f"Of the slides' {judged} published changes, {c[AGREES]} agree, {c[DISAGREES]} disagree, "
          f"{c[INCONCLUSIVE]} are inconclusive and {c[NOT_DECIDABLE]} is not decidable (CPU isolation: the "
          f"slides' own test found no significant change)"
          + (f"; the disagreements: {names(dis)}" if dis else "")
          + (f"; the agreements: {names(agr)}" if agr else "") + ".")
    if nul["evaluations"] == 0:
        head = ("The Pixel 4's kernel does not build core_ctl, so switching CPU isolation on runs nothing "
                "(0 core_ctl evaluations)")
    else:
        head = (f"At the Pixel 4's core_ctl values (the kernel's: its init scripts write none) core_ctl isolated "
                f"{nul['isolations']:.0f} CPUs per run in {nul['evaluations']:.0f} evaluations")
    if _null_identical(nul):
        s2 = (head + " and every pair is identical to mainline's (feec calls "
              f"{nul['feec_base']:.0f} → {nul['feec_new']:.0f} per run): a vendor knob changes nothing by itself, "
              "so each change's simulated effect is its own.")
    else:
        s2 = (head + f", yet switching the change on moved the overall score by {_interval(nul['score'])} and CPU "
              f"energy by {_interval(nul['energy'])} (feec calls {nul['feec_base']:.0f} → {nul['feec_new']:.0f} per "
              "run), a floor under every change here.")
        for r, pub in ((r, pub) for pub, r in zip(PUBLISHED, rows) if r.verdict == AGREES):
            beyond = _beyond_null(grid, pub.change, pub.sim_key)
            _, lo, hi = mean_ci(beyond.changes)
            if not (lo > 0 or hi < 0):
                s2 += (f" The agreement of {r.row.split(' (')[0]} is not told apart from that floor: per pair it "
                       f"differs from the null change by {_interval(beyond)}.")
    fired = ", ".join(f"{CHANGE[k].slide.replace('vendor ', '')} {_fired(prim, k, sz.scores):.0f}"
                      for k in ("prev_cpu_fastpath", "task_packing", "migration_margins", "rt_placement"))
    s3 = (f"Per run the changes fired: {fired} (the slides: 500k fast paths and 16k packings per PCMark run; "
          "the PCMark-like suite wakes tasks about 2 000 times per run).")
    return " ".join([s1, s2, s3])


def _cell_text(cell: Cell) -> str:
    if cell.p is None:
        return "= (identical)"
    s = f"{cell.mean:+.2f}"
    return f"**{s}**" if cell.significant else s


def _grid_table(grid: dict[tuple[str, str], Cell]) -> str:
    head = "| change | " + " | ".join(SHORT[k] for _, k in METRICS) + " |\n|---|" + "---|" * len(METRICS) + "\n"
    lines = []
    for c in CHANGES:
        if (c.key, METRICS[0][1]) not in grid:
            continue
        lines.append(f"| {c.slide} | " + " | ".join(_cell_text(grid[(c.key, k)]) for _, k in METRICS) + " |")
    return head + "\n".join(lines)


def _row_text(r: Row) -> str:
    return f"{r.row.split(' (')[0]} / {r.metric}: slides {r.paper:+.3g} %, here {change_text(r)}, {r.verdict}"


def _notes(rows: list[Row], grid: dict, prim: dict, sz: Sizes, sens_grids: dict, sens_rows: dict,
           ref_grid: dict, ref_results: dict, swapped: list[Row]) -> list[str]:
    notes = []
    floor = min_pairs(ALPHA)
    notes.append(
        f"**How the slides' evaluation is rebuilt.** Each vendor change is one knob of `eas` "
        f"(`vendor.*`, docs/schedulers.md), switched on alone against plain `eas` with schedutil and the "
        f"`{KERNEL}` kernel profile as the Pixel 4 built it (Qualcomm's Android 4.14: EAS, schedtune, "
        f"Qualcomm's schedutil, on PELT: `sched_walt` 0, no core_ctl, 300 Hz; docs/mechanisms/walt.md) with the "
        f"Pixel 4's init values (init.hardware.rc: schedutil "
        f"rate limits 500 / 20000 µs, top-app boost 10 and prefer_idle, foreground prefer_idle; core_ctl at the "
        f"kernel's values, as the device writes none), every other vendor knob off, on `{PLATFORM}`. The "
        f"workload is the PCMark-Work-2.0-like `pcmark` suite (this project's, with its own scoring: its scores "
        f"are not PCMark's) beside `phone-mix` (Android's UI pipeline, binder, background threads and a "
        f"SCHED_FIFO audio mixer) for a fixed {WINDOW_S:g} s window in which the suite ends; both are choices "
        f"made before any result, as the slides are silent on them (the sensitivity table varies them). Runs "
        f"are paired by seed. Scores are compared over {sz.scores} pairs, CPU energy (the engine's; the slides' "
        f"PMIC CPU rails) over the first {sz.energy}, as the slides use 100 PCMark runs and 10 energy runs.")
    notes.append(
        "**Verdicts.** Each published change is judged by the 95 % interval of the mean per-pair change "
        "(core.row_from with pct, core.judge), as in every study: *agrees* when the interval excludes no change "
        "on the slides' side, *disagrees* on the other, *inconclusive* when it includes no change (a tie too). "
        f"The slides' own criterion, a Wilcoxon signed-rank p <= {ALPHA:g}, decides only which published changes "
        "are within the slides' noise: the CPU isolation value (no significant change) is *not decidable*. The "
        "p of each simulated change is kept in its row's note for information; with many pairs a Wilcoxon p "
        "<= 0.01 and a t interval that excludes 0 almost always go together, but they are different tests. "
        f"The smallest two-sided exact Wilcoxon p of n pairs is 2/2^n, so p <= {ALPHA:g} needs n >= {floor} "
        f"pairs; `smoke` runs fewer.")
    notes.append(
        "**Reading the slides (OCR).** The slides' text is OCR of images. The results slide is a 2x2 bar chart "
        "(migration margins, prev_cpu fastpath / RT energy aware, task packing), one bar per metric with "
        "p <= 0.01, labelled with its % change, in two builds: scores only, then with CPU_power. Legible "
        "labels: 3.32 and 2.35 (top row, beside the legend entries PcmaWritingV2Score and PcmaWorkv2Score), "
        "-0.67 and -0.6 (top row, second build only, so CPU_power), 0.83 (RT energy aware) and -0.57 (task "
        "packing), both in the first build, so scores of an illegible kind. The legend also lists "
        "PcmaWebV2Score, PcmaVideoEditingScore and PcmaPhotoEditingV2Score, whose bars' labels are not in the "
        "OCR: those numbers are lost and have no row. PcmaDataManipulationScore is on no slide. The "
        "assignment of 3.32 / 2.35 to migration margins rests on the legend's order (first appearance in the "
        "data = the first panel); the other reading puts them on the prev_cpu fastpath panel (see below).")
    nul = _null_change(grid, prim, sz)
    if nul["evaluations"] == 0:
        head = ("**CPU isolation on the Pixel 4's kernel, a null change.** The Pixel 4's kernel does not build "
                "core_ctl (floral_defconfig) and its device tree writes no core_ctl value, so the change runs "
                "nothing: 0 core_ctl evaluations per run.")
    else:
        head = (f"**CPU isolation at the Pixel 4's values, a null change.** The Pixel 4's device tree writes no "
                f"core_ctl value, so core_ctl runs with the kernel's values: busy thresholds 0 make every CPU busy "
                f"and nothing is isolated ({nul['isolations']:.0f} isolations per run in "
                f"{nul['evaluations']:.0f} evaluations).")
    if _null_identical(nul):
        notes.append(head + " Every score and energy pair is identical to mainline's (feec calls "
                     f"{nul['feec_base']:.0f} → {nul['feec_new']:.0f} per run), as a change that never fires must "
                     "leave them: the vendor path adds nothing of its own, so each other change is measured alone.")
    else:
        notes.append(head + f" The runs still differ from mainline's: overall score {_interval(nul['score'])}, CPU "
                     f"energy {_interval(nul['energy'])}, feec calls {nul['feec_base']:.0f} → {nul['feec_new']:.0f} "
                     "per run (with pcmark alone: "
                     f"{_interval(sens_grids['pcmark alone'][('cpu_isolation', 'pcmark.score')])}). "
                     + _no_schedtune_null(sens_grids) + "This floor lies under every change's simulated effect here.")
    ref_iso = ref_results["vendor.cpu_isolation"][:sz.scores]
    notes.append(
        "**CPU isolation where a device writes thresholds.** With Qualcomm's Snapdragon 855 reference script's "
        "values (the sm8150 profile's defaults: gold min_cpus 2, gold+ min_cpus 0, busy 60/30 %, task_thres 3 / "
        "1), which the Pixel 4 does not write, core_ctl isolates "
        f"{_m(ref_iso, 'counters.vendor.cpu_isolation'):.1f} CPUs per run and the change moves writing by "
        f"{_interval(ref_grid[('cpu_isolation', 'pcmark.writing_score')])}, the overall score by "
        f"{_interval(ref_grid[('cpu_isolation', 'pcmark.score')])} and CPU energy by "
        f"{_interval(ref_grid[('cpu_isolation', 'energy_j')])} (Wilcoxon p {_fmt_p(ref_grid[('cpu_isolation', 'pcmark.writing_score')].p)} "
        "for writing). The slides' isolation row is not decidable either way, so no verdict depends on these "
        "values.")
    # every row that does not agree, grouped by change: the numbers, then the mechanism once
    lines = ["**Where the simulation does not agree, and why (from the run's counters).**"]
    for c in CHANGES[1:]:
        mine = [r for pub, r in zip(PUBLISHED, rows)
                if pub.change == c.key and r.verdict in (DISAGREES, INCONCLUSIVE)]
        if mine:
            lines.append(f"- *{c.slide}* — " + "; ".join(_row_text(r) for r in mine)
                         + f". {_reason(c.key, prim, sz)}")
    lines.append("\nCommon to all: the suite is PCMark-like, not PCMark (a few long operations, ~2 000 wake-ups "
                 "per run with phone-mix against ~500 000 in the real suite); sm8150's power model is estimated"
                 + ("." if _null_identical(nul) else "; the null change above (what any vendor knob changes by "
                    "itself) is of the size of several published changes."))
    notes.append("\n".join(lines))
    agree = [(pub, r) for pub, r in zip(PUBLISHED, rows) if r.verdict == AGREES]
    if agree and not _null_identical(nul):
        notes.append("**Where it agrees, and against the null change.** " + "; ".join(
            f"{_row_text(r)}; per pair, minus the null change (CPU isolation isolating nothing, the same mainline "
            f"run): {_interval(_beyond_null(grid, pub.change, pub.sim_key))}" for pub, r in agree)
            + ". An agreement whose interval against the null change includes 0 is not credited to the change's "
            "own mechanism: turning any vendor knob on moves the runs that much.")
    alt = [r for pub, r in zip(PUBLISHED, swapped) if pub.change == "migration_margins" and pub.sim_key != "energy_j"]
    notes.append("**The other reading of 3.32 / 2.35** (on the prev_cpu fastpath panel): "
                 + "; ".join(f"{r.metric}: slides {r.paper:+.3g} %, here {change_text(r)}, {r.verdict}" for r in alt)
                 + f". Counts under that reading: {counts_text(verdict_counts(swapped))}.")
    notes.append(
        f"**Every change x metric, simulated** ({PRIMARY.name}; mean % change from mainline EAS; **bold** = "
        f"Wilcoxon p <= {ALPHA:g}, the bars the slides would draw; scores over {sz.scores} pairs, energy over "
        f"{sz.energy}). Scores: higher is better; energy: lower is better.\n\n" + _grid_table(grid))
    fired = ", ".join(f"{c.key} {_fired(prim, c.key, sz.scores):.0f}" for c in CHANGES)
    notes.append(f"**How often each change fired** (mean per run, `counters.vendor`): {fired}. The slides give "
                 "16k +- 900 packings and 500k fast paths per PCMark run; the PCMark-like suite wakes tasks far "
                 "less often, so the counts are not comparable in size (the two count rows).")
    sl = []
    for cfg in SENSITIVITY:
        g = sens_grids[cfg.name]
        sl.append(f"**{cfg.parameter}: {cfg.value}** ({sz.scores} pairs, energy over {sz.energy}): "
                  f"{counts_text(verdict_counts(sens_rows[cfg.name]))}. Rows: "
                  + "; ".join(f"{r.row.split(' (')[0]} / {r.metric} {change_text(r)} {r.verdict}"
                              for r in sens_rows[cfg.name] if r.verdict is not None)
                  + ".\n\n" + _grid_table(g))
    notes.append("**Sensitivity to what the slides leave open.** The background beside PCMark, the run window "
                 "and the kernel profile (the Pixel 4's own, EAS on PELT with schedtune, is none of the "
                 "engine's profiles) were chosen before any result and are not changed to match; each is run "
                 "at two other values:\n\n" + "\n\n".join(sl))
    dropped = {name: max(c.dropped for c in g.values())
               for name, g in [(PRIMARY.name, grid)] + [(cfg.name, sens_grids[cfg.name]) for cfg in SENSITIVITY]}
    notes.append("**Unfinished suites.** A pair is dropped when either run's suite did not finish in its window: "
                 + ("none was, in any configuration." if not any(dropped.values()) else
                    "; ".join(f"{name}: up to {d} pair(s) per cell" for name, d in dropped.items() if d) + "."))
    notes.append(
        "**No counterpart.** The setup slide's scatter of the Pixel 4's OPPs (power against V²·f per "
        "little/mid/big CPU) has no legible values; `hetsched platforms show sm8150` lists the modelled OPPs, "
        "whose voltages and power are estimated. The CPU isolation slide's energy-estimate has no legible "
        "value (its row has the simulated change only). The legend's web, video and photo bars lost their "
        "labels in the OCR. The energy is over a fixed window (the engine cannot stop a run when one of two "
        "workloads ends), not over the suite's own duration.")
    return notes


# ----------------------------------------------------------------------------- plots

def _save_svg(fig, path) -> None:
    fig.savefig(path, format="svg", metadata={"Date": None})


def _plot_changes(ctx: Context, grid: dict, sz: Sizes) -> tuple[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    name = f"{STUDY}_changes.svg"
    keys = [k for _, k in METRICS]
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": STUDY}):
        fig, axes = plt.subplots(2, 3, figsize=(15, 8.5))
        axes = axes.ravel()
        for ax, c in zip(axes, CHANGES):
            for x, key in enumerate(keys):
                cell = grid[(c.key, key)]
                m, lo, hi = mean_ci(cell.changes)
                if math.isnan(m):
                    continue
                err = None if math.isnan(lo) else [[m - lo], [hi - m]]
                # filled: Wilcoxon p <= 0.01 (a bar the slides would draw); hollow: not
                ax.errorbar([x], [m], yerr=err, fmt="o", color="#1f4e9c", capsize=3, linewidth=1,
                            markerfacecolor="#1f4e9c" if cell.significant else "white", zorder=4)
            for pub in PUBLISHED:
                if pub.change == c.key and pub.value is not None and not pub.sim_key.startswith("counters."):
                    # beside the simulated point, so that equal values stay apart
                    x = keys.index(pub.sim_key) + 0.25
                    ax.plot([x], [pub.value], marker="D", color="#c0392b", markersize=7, linestyle="none", zorder=5)
                    ax.annotate(f"slides {pub.value:+.3g}", (x, pub.value), xytext=(5, 4),
                                textcoords="offset points", fontsize=7, color="#c0392b")
            ax.axhline(0, color="black", linewidth=0.6)
            ax.axvline(len(keys) - 1.5, color="#999999", linestyle=":", linewidth=0.8)
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels([SHORT[k] for k in keys], rotation=35, ha="right", fontsize=8)
            ax.set_title(f"{c.slide}\n({c.knob})", fontsize=9)
            ax.set_ylabel(UNIT_PCT, fontsize=8)
        axes[-1].axis("off")
        axes[-1].text(0.0, 0.9, "\n".join([
            "sm8150, pcmark + phone-mix, 4 s window,",
            "msm-4.14 with the Pixel 4's values, eas + schedutil;",
            "blue: mean per-pair change from mainline EAS, 95 % interval;",
            f"scores over {sz.scores} pairs, energy over {sz.energy}",
            f"filled: Wilcoxon p <= {ALPHA:g} (a bar the slides would draw); hollow: not",
            "red diamond, set right of its metric: the slides' value (OCR, see notes)",
            "scores: higher is better; energy: lower is better",
        ]), fontsize=9, va="top", transform=axes[-1].transAxes)
        fig.suptitle("Vendor changes to EAS, each alone vs mainline EAS", fontsize=11)
        fig.tight_layout()
        _save_svg(fig, ctx.out_dir / name)
        plt.close(fig)
    return name, ("Per change: the simulated mean change of each PCMark-like score and of CPU energy from mainline "
                  f"EAS on {PLATFORM} with its 95 % interval (filled where the Wilcoxon p <= {ALPHA:g}); red "
                  "diamonds, set beside their metric, are the slides' legible values.")


_SENS_STYLE = ("o", "s", "^", "v", "<", ">", "P", "X")
_SENS_COLOR = ("#000000", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2")


def _plot_sensitivity(ctx: Context, rows: list[Row], sens_rows: dict[str, list[Row]]) -> tuple[str, str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    name = f"{STUDY}_sensitivity.svg"
    idx = [i for i, (pub, r) in enumerate(zip(PUBLISHED, rows)) if r.paper_ratio is not None and pub.paper_sign]
    series = [(f"{PRIMARY.name} (chosen)", rows)] + [(f"{cfg.parameter}: {cfg.value}", sens_rows[cfg.name])
                                                      for cfg in SENSITIVITY]
    width = 0.8 / len(series)
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": STUDY}):
        fig, ax = plt.subplots(figsize=(14, 7.5))
        for j, (label, rs) in enumerate(series):
            xs, ys, lo, hi = [], [], [], []
            for k, i in enumerate(idx):
                r = rs[i]
                if r.sim_ratio is None:
                    continue
                # each configuration at its own offset: intervals that coincide stay apart
                xs.append(k - 0.4 + width * (j + 0.5))
                m = (r.sim_ratio - 1) * 100
                ys.append(m)
                lo.append(m - ((r.change_lo if r.change_lo is not None else r.sim_ratio) - 1) * 100)
                hi.append(((r.change_hi if r.change_hi is not None else r.sim_ratio) - 1) * 100 - m)
            ax.errorbar(xs, ys, yerr=[lo, hi], fmt=_SENS_STYLE[j % len(_SENS_STYLE)], color=_SENS_COLOR[j % 8],
                        markersize=6 if j else 7, capsize=2, linewidth=1, label=label)
        for k, i in enumerate(idx):
            ax.plot([k - 0.45, k + 0.45], [rows[i].paper] * 2, color="#c0392b", linewidth=2.5, alpha=0.7,
                    label="the slides' value" if k == 0 else None)
        ax.axhline(0, color="black", linewidth=0.6)
        for k in range(1, len(idx)):
            ax.axvline(k - 0.5, color="#dddddd", linewidth=0.6)
        ax.set_xticks(range(len(idx)))
        ax.set_xticklabels([f"{rows[i].row.split(' (')[0]}\n"
                            + (rows[i].metric if "illegible" not in rows[i].metric else "a score (vs overall)")
                            for i in idx], fontsize=8)
        ax.set_ylabel(UNIT_PCT)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.12), ncol=3)
        ax.set_title("Each published change (red bar) beside the simulated change with its 95 % interval, "
                     "per configuration", fontsize=10)
        fig.tight_layout()
        _save_svg(fig, ctx.out_dir / name)
        plt.close(fig)
    return name, ("Sensitivity: each published change the slides call significant, beside the simulated change "
                  "and its 95 % interval in the study's configuration and at two other values of each open "
                  "parameter (background load, run window, kernel profile); markers are offset per "
                  "configuration.")
