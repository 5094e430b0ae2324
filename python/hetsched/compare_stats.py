"""``hetsched compare``'s statistics: per configuration the mean over the seeds with its
95 % confidence interval, and against the baseline (the first configuration) the change
of the mean, its 95 % interval and a test's p value.

compare runs every configuration on the same seeds 0..N-1, and a seed draws the same
workload for every configuration, so the runs are paired by seed. The default test and
the change's interval are on the per-seed differences (Student's paired t): the spread
the seeds share (a heavier draw costs every configuration more energy) cancels in the
differences, and what is left is the configurations' own difference. ``--test wilcoxon``
takes Wilcoxon's signed-rank test on the same differences (from 6 seeds: with fewer its
smallest two-sided p is above 0.05, so it could never mark a difference), ``--test
welch`` the unpaired Welch's t-test of the two samples, as compare had before 2026-11.
"""

from __future__ import annotations

import math
import warnings
from typing import Sequence

#: --test's values: (name for the legend and the documents, what the change's interval is)
TESTS: dict[str, tuple[str, str]] = {
    "paired-t": ("Student's paired t-test on the per-seed differences",
                 "Student's t on the per-seed differences"),
    "wilcoxon": ("Wilcoxon's signed-rank test on the per-seed differences",
                 "Student's t on the per-seed differences"),
    "welch": ("Welch's unpaired t-test", "Welch's interval of the difference of the means"),
}
DEFAULT_TEST = "paired-t"
#: the fewest seeds --test wilcoxon accepts: with 5 pairs its smallest two-sided p is
#: 2/2^5 = 0.0625, so it could never mark a difference at 0.05
WILCOXON_MIN_SEEDS = 6


def _clean(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and not math.isnan(float(v))]


def paired_differences(x_by_seed: dict, base_by_seed: dict) -> list[float]:
    """x - base for each seed both have a number for, in seed order."""
    out = []
    for seed in sorted(set(x_by_seed) & set(base_by_seed)):
        a, b = x_by_seed[seed], base_by_seed[seed]
        if a is None or b is None or math.isnan(float(a)) or math.isnan(float(b)):
            continue
        out.append(float(a) - float(b))
    return out


def paired_t(d: Sequence[float]) -> tuple[float | None, float | None]:
    """(two-sided p, half-width of the mean difference's 95 % interval) of Student's paired
    t on the differences ``d``: t = mean / (sd / sqrt(n)) with n-1 degrees of freedom
    (scipy.stats.ttest_rel's). None, None with fewer than two. Differences without
    variance: identical runs (all 0) do not differ, p = 1; a constant nonzero difference
    surely does, p = 0 (the statistic is undefined there); the interval's half-width is 0."""
    from scipy import stats

    from hetsched.metric_names import mean_ci95

    m, sd, half, n = mean_ci95(_clean(d))
    if n < 2:
        return None, None
    if sd == 0 or sd <= 1e-12 * abs(m):
        return (1.0 if m == 0 else 0.0), 0.0
    p = float(2 * stats.t.sf(abs(m / (sd / math.sqrt(n))), n - 1))
    return p, half


def wilcoxon_p(d: Sequence[float]) -> float | None:
    """Two-sided p of Wilcoxon's signed-rank test on the differences ``d`` (zeros dropped,
    as scipy.stats.wilcoxon's default); None with fewer than two; 1 when every difference
    is 0 (identical runs)."""
    from scipy import stats

    d = _clean(d)
    if len(d) < 2:
        return None
    if all(v == 0 for v in d):
        return 1.0
    with warnings.catch_warnings():  # few nonzero differences: scipy warns of its approximation
        warnings.simplefilter("ignore")
        p = float(stats.wilcoxon(d).pvalue)
    return None if math.isnan(p) else p


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float | None, float | None]:
    """(two-sided p of Welch's t-test, half-width of the 95 % interval of mean(a) - mean(b)
    with Welch-Satterthwaite's degrees of freedom); None, None with fewer than two runs on
    either side. Two samples without variance differ surely when their means differ
    (p = 0), not at all when they are equal (p = 1); the half-width is 0."""
    from scipy import stats

    a, b = _clean(a), _clean(b)
    na, nb = len(a), len(b)
    if na < 2 or nb < 2:
        return None, None
    ma, mb = sum(a) / na, sum(b) / nb
    va = sum((v - ma) ** 2 for v in a) / (na - 1) / na
    vb = sum((v - mb) ** 2 for v in b) / (nb - 1) / nb
    if va == 0 and vb == 0:
        return (0.0 if ma != mb else 1.0), 0.0
    se = math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    p = float(2 * stats.t.sf(abs(ma - mb) / se, df))
    return (None if math.isnan(p) else p), float(stats.t.ppf(0.975, df) * se)


def welch_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Welch's t-test p value of two samples (None with fewer than two runs each)."""
    return welch(a, b)[0]


def change_test(x_by_seed: dict, base_by_seed: dict, test: str = DEFAULT_TEST) -> tuple[float | None, float | None]:
    """(p, half-width of the 95 % interval of the change of the mean, in the metric's unit)
    of a configuration's runs against the baseline's, each a dict seed -> value."""
    if test == "welch":
        return welch(list(x_by_seed.values()), list(base_by_seed.values()))
    d = paired_differences(x_by_seed, base_by_seed)
    p, half = paired_t(d)
    if test == "wilcoxon":
        p = wilcoxon_p(d)
    return p, half


def summary(groups: dict, cols: list[str], keys: list[str], test: str = DEFAULT_TEST, unit=lambda k: "") -> list[dict]:
    """Per metric and configuration: the mean over the seeds, its standard deviation, the
    half-width of its 95 % confidence interval (Student's t with n-1 degrees of freedom);
    against the baseline (the first configuration) the change of the mean relative to the
    baseline's mean, the half-width of the change's 95 % interval (relative alike), the
    number of seeds paired, and ``test``'s p value. ``groups`` maps each configuration to a
    DataFrame with a column per metric and one ``seed`` (without it, rows pair by position)."""
    from hetsched.metric_names import mean_ci95

    def by_seed(df, key) -> dict:
        seeds = df["seed"].tolist() if "seed" in df.columns else list(range(len(df)))
        return {s: v for s, v in zip(seeds, df[key].tolist()) if v is not None and not math.isnan(float(v))}

    out = []
    for key in keys:
        base = by_seed(groups[cols[0]], key)
        bmean = sum(base.values()) / len(base) if base else math.nan
        scale = abs(bmean) if bmean and not math.isnan(bmean) else None
        for c in cols:
            mine = by_seed(groups[c], key)
            mean, sd, ci, n = mean_ci95(list(mine.values()))
            rel = half = p = pairs = None
            if c != cols[0]:
                rel = (mean - bmean) / scale if scale else None
                p, h = change_test(mine, base, test)
                half = h / scale if scale and h is not None else None
                pairs = len(set(mine) & set(base)) if test != "welch" else None
            mark = "" if p is None else "**" if p < 0.01 else "*" if p < 0.05 else ""
            out.append({"metric": key, "unit": unit(key), "cell": c, "n": n, "mean": mean, "std": sd,
                        "ci95": ci, "rel_change_vs_first": rel, "rel_change_ci95": half, "n_paired": pairs,
                        "p_value": p, "significance": mark})
    return out


def legend(baseline: str, test: str) -> str:
    """The line under compare's title saying what ± and the stars are."""
    name, interval = TESTS[test]
    same = "" if test == "welch" else ": every cell runs the same seeds"
    return (f"baseline {baseline}; ± after a mean is its 95 % confidence interval over the seeds (Student's t), "
            f"after a change the change's 95 % interval ({interval}{same}); * p < 0.05, ** p < 0.01 against "
            f"the baseline ({name.replace(' on the per-seed differences', '')})")
