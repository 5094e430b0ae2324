"""The names, units and directions of the metrics `hetsched compare` shows and
`hetsched plot` draws, and their summary over seeds: one definition for both."""

from __future__ import annotations

__all__ = ["COMPARE_METRICS", "COMPARE_DEFAULT", "metric_unit", "metric_label", "lower_is_better", "mean_ci95"]

# metric key, label, unit, lower is better
COMPARE_METRICS = [
    ("energy_j", "energy", "J", True),
    ("energy_lower_bound_j", "energy lower bound", "J", True),
    ("energy_over_bound", "energy / lower bound", "x", True),
    ("avg_power_mw", "avg power", "mW", True),
    ("missed_activation_pct", "missed activations", "%", True),
    ("wakeup_latency_us_p99", "wakeup latency p99", "us", True),
    ("wakeup_latency_us_mean", "wakeup latency mean", "us", True),
    ("slack_us_mean", "slack mean", "us", False),
    ("migrations", "migrations", "", True),
]

#: what compare shows without --metric, beside the workload's headline figures
COMPARE_DEFAULT = ("energy_j", "energy_over_bound", "avg_power_mw", "wakeup_latency_us_p99",
                   "missed_activation_pct", "migrations")

# a workload metric's unit, from its name's ending (game.fps, app-launch.entry_ms_mean)
_UNIT_ENDINGS = (("_pct", "%"), ("_ms", "ms"), ("_s", "s"), ("_mw", "mW"), ("_ma", "mA"), ("_us", "us"),
                 ("fps", "fps"), ("_per_s", "/s"))


def metric_unit(key: str) -> str:
    """``J`` for ``energy_j``; a workload's metric by its name's ending (``fps``, ``_ms``)."""
    for k, _label, unit, _lower in COMPARE_METRICS:
        if k == key:
            return unit
    name = key.rpartition(".")[2]
    for part in name.split("_")[::-1] if "_" in name else [name]:
        for ending, unit in _UNIT_ENDINGS:
            if f"_{part}".endswith(ending) or part == ending:
                return unit
    return ""


def lower_is_better(key: str) -> bool | None:
    """Whether a smaller value is better, where the table declares it (else None)."""
    return next((low for k, _lb, _u, low in COMPARE_METRICS if k == key), None)


def metric_label(key: str, with_direction: bool = False) -> str:
    """``wakeup latency p99 [us]``, with ``(lower is better)`` if asked and declared."""
    label = next((lb for k, lb, _u, _l in COMPARE_METRICS if k == key), key)
    unit = metric_unit(key)
    text = f"{label} [{unit}]" if unit else label
    lower = lower_is_better(key)
    if with_direction and lower is not None:
        text += f" ({'lower' if lower else 'higher'} is better)"
    return text


def mean_ci95(values) -> tuple[float, float, float | None, int]:
    """The mean of ``values`` (NaN when there are none), their standard deviation (n-1; 0
    for one value), the half-width of the mean's 95 % confidence interval (Student's t with
    n-1 degrees of freedom; None for fewer than two values) and their count."""
    import math

    import numpy as np
    from scipy import stats

    x = np.asarray(values, dtype=float)
    n = len(x)
    mean = float(x.mean()) if n else math.nan
    sd = float(x.std(ddof=1)) if n > 1 else 0.0
    ci = float(stats.t.ppf(0.975, n - 1) * sd / math.sqrt(n)) if n > 1 else None
    return mean, sd, ci, n
