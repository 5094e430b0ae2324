"""What real phones show while doing what each phone workload stands for.

The figures are those of :mod:`hetsched.traces.figures` (``hetsched trace-stats``), measured
on real traces by the same code that measures a simulated run's ftrace output, so a
workload's figures and its references compare like with like. Each phone workload names
the traces of its activity (:data:`REFERENCES`); ``scripts/phone_calibration.py`` prints a
run's figures beside them with the factor-of-2 verdicts, and docs/workloads-mobile.md,
"Calibration", holds its table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

__all__ = ["RealPhone", "REAL_PHONES", "REFERENCES", "FIGURES", "figure_values", "reference_range",
           "within_2x", "written", "PHONES_OF_TODAY"]

#: (key, label, how a value is written) of the figures compared
FIGURES = (
    ("threads_run", "threads that run", "{:d}"),
    ("wakeups_per_s", "wakeups per s", "{:,.0f}"),
    ("busy_share", "busy share, all CPUs", "{:.1%}"),
    ("wait_run", "wait / run, all threads", "{:.2f}"),
    ("ui_wait_run", "wait / run, UI thread", "{:.2f}"),
    ("render_wait_run", "wait / run, RenderThread", "{:.2f}"),
    ("wakeup_latency_us", "wakeup latency p50 (µs)", "{:.0f}"),
)


@dataclass(frozen=True)
class RealPhone:
    label: str
    #: the trace's file name, and where it comes from with its licence
    trace: str
    source: str
    soc: str
    activity: str
    window_s: float
    #: FIGURES' keys -> value (None: the trace cannot tell, e.g. no app's RenderThread)
    figures: dict


_GRACKER = ("Gracker/SystraceForBlog on GitHub (2019 systraces of a Snapdragon 855 phone, Android; the "
            "repository states no licence: measured here, not committed)")

#: measured 2026-11-28 with hetsched.traces.figures (``hetsched trace-stats TRACE``)
REAL_PHONES = {p.label: p for p in (
    RealPhone("Pixel 6a launch", "pixel6a_tensor_warm_startup.perfetto-trace",
              "Perfetto's test data api32_startup_warm (Apache-2.0), ../shared/realdata/traces/",
              "gs101", "a warm app launch", 1.919,
              {"threads_run": 368, "wakeups_per_s": 3574, "busy_share": 0.151, "wait_run": 0.75,
               "ui_wait_run": 0.22, "render_wait_run": 0.27, "wakeup_latency_us": 65}),
    RealPhone("SD855 game", "Android_Systrace-MainThread-RenderThread/wangzherongyao.html.zip", _GRACKER, "sm8150",
              "a game (Honor of Kings)", 2.571,
              {"threads_run": 188, "wakeups_per_s": 8279, "busy_share": 0.284, "wait_run": 0.36,
               "ui_wait_run": 0.19, "render_wait_run": 0.26, "wakeup_latency_us": 30}),
    RealPhone("SD855 launcher scroll", "Android_Systrace_Input/trace_input_blog_launcher_scroll.html.zip", _GRACKER,
              "sm8150", "scrolling the launcher", 2.607,
              {"threads_run": 188, "wakeups_per_s": 3329, "busy_share": 0.082, "wait_run": 0.44,
               "ui_wait_run": 0.61, "render_wait_run": 0.41, "wakeup_latency_us": 36}),
    RealPhone("SD855 list scroll", "Android_Systrace_Input/trace_input_blog_list_jank.html.zip", _GRACKER, "sm8150",
              "scrolling a list, with jank", 4.261,
              {"threads_run": 220, "wakeups_per_s": 4819, "busy_share": 0.166, "wait_run": 0.45,
               "ui_wait_run": 0.28, "render_wait_run": 0.36, "wakeup_latency_us": 45}),
    RealPhone("SD855 Flutter app", "Android_Systrace-MainThread-RenderThread/flutter-wanandroid.html.zip", _GRACKER, "sm8150",
              "scrolling a Flutter app", 4.174,
              {"threads_run": 261, "wakeups_per_s": 3969, "busy_share": 0.198, "wait_run": 0.32,
               "ui_wait_run": 0.42, "render_wait_run": 0.51, "wakeup_latency_us": 44}),
    RealPhone("Catapult 2012", "catapult_2cpu_launcher_2012.html",
              "Catapult's test data (BSD-3-Clause), ../shared/realdata/traces/", "2-CPU 2012 phone",
              "the launcher", 5.000,
              {"threads_run": 63, "wakeups_per_s": 1365, "busy_share": 0.196, "wait_run": 0.48,
               "ui_wait_run": None, "render_wait_run": None, "wakeup_latency_us": 14}),
)}

#: the phone workloads' activities: the real traces of the same thing
REFERENCES = {
    "browsing": ("SD855 launcher scroll", "SD855 list scroll", "SD855 Flutter app"),
    "game": ("SD855 game",),
    "app-launch": ("Pixel 6a launch",),
}

#: today's eight-CPU phones (the 2012 two-CPU phone is not one of the SoCs simulated)
PHONES_OF_TODAY = tuple(k for k, p in REAL_PHONES.items() if p.soc in ("gs101", "sm8150"))


def figure_values(f) -> dict:
    """FIGURES' keys -> the value of a :class:`hetsched.traces.figures.PhoneFigures`."""
    return {
        "threads_run": f.threads_run,
        "wakeups_per_s": f.wakeups_per_s if f.wakeup_event else None,
        "busy_share": f.busy_share,
        "wait_run": f.wait_run,
        "ui_wait_run": f.ui.wait_run if f.ui else None,
        "render_wait_run": f.render.wait_run if f.render else None,
        "wakeup_latency_us": f.wakeup_latency_ns / 1000 if f.wakeup_latency_ns is not None else None,
    }


def reference_range(key: str, phones) -> Optional[tuple[float, float]]:
    vals = [REAL_PHONES[p].figures[key] for p in phones if REAL_PHONES[p].figures[key] is not None]
    return (min(vals), max(vals)) if vals else None


def within_2x(value: Optional[float], rng: Optional[tuple[float, float]]) -> Optional[bool]:
    """Whether ``value`` is within a factor of 2 of the range (half its low end to twice
    its high end); None when either is unknown."""
    if value is None or rng is None:
        return None
    return rng[0] / 2 <= value <= 2 * rng[1]


def written(key: str, value: Optional[float]) -> str:
    """A figure's value as the tables write it ("-" when unknown)."""
    if value is None:
        return "-"
    text = next(fmt for k, _, fmt in FIGURES if k == key).format(value)
    return text.replace("%", " %")
