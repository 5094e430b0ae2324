"""``hetsched compare``'s statistics: per configuration the mean over the seeds with its
95 % confidence interval, and against the baseline (the first configuration) the change
of the mean, its 95 % interval and a test's p value.

compare runs every configuration on the same seeds 0..N-1, and a seed draws the same
workload for every configuration, so the runs are paired by seed. The default test and
the change's interval are on the per-seed differences (Student's paired t): the spread
the seeds share (a heavier draw costs every configuration more energy) cancels in the
differences, and what is left is the configurations' own difference. ``--test wilcoxon``
takes Wilcoxon's signed-rank test on the same differences (from 6 seeds: with fewer its
smallest two-sided p is above 0.05, so it could never mark a difference) and, as the
change's centre and interval, the estimate and interval that go with that test: the
Hodges-Lehmann estimate (the median of the Walsh averages) and the distribution-free
interval between two of the Walsh averages' order statistics (R's ``wilcox.test(...,
conf.int = TRUE)``; Bauer 1972; Hollander & Wolfe, Nonparametric Statistical Methods,
3.2). ``--test welch`` takes the unpaired Welch's t-test of the two samples, as compare had
before 2026-11.
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
                 "Hodges-Lehmann's distribution-free interval from the Walsh averages of the per-seed "
                 "differences, around their median"),
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
    """Two-sided p of Wilcoxon's signed-rank test on the differences ``d``, zero differences
    dropped, as R's wilcox.test(d) computes it: from the exact null distribution (scipy's
    exact test) for at most WILCOXON_EXACT_MAX nonzero differences without ties among their
    magnitudes, else from the normal approximation with the tie and continuity corrections
    (signed_rank_z). None with fewer than two; 1 when every difference is 0 (identical
    runs)."""
    import numpy as np
    from scipy import stats

    d = _clean(d)
    if len(d) < 2:
        return None
    nz = np.array([v for v in d if v != 0], dtype=float)
    if len(nz) == 0:
        return 1.0
    if _exact(nz):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = float(stats.wilcoxon(nz, method="exact").pvalue)
        return None if math.isnan(p) else p
    z = signed_rank_z(nz, 0.0)
    return None if math.isnan(z) else float(2 * stats.norm.sf(abs(z)))


def _exact(nz) -> bool:
    """R's choice for the nonzero differences ``nz``: the exact distribution below 50 of
    them without ties among their magnitudes, else the normal approximation."""
    import numpy as np

    return len(nz) <= WILCOXON_EXACT_MAX and len(np.unique(np.abs(nz))) == len(nz)


def signed_rank_z(d, mu: float) -> float:
    """The signed-rank statistic of centre ``mu`` standardised as R's wilcox.test does under
    the normal approximation: the differences d - mu, zeros dropped, ranked by magnitude
    with midranks for ties; W+ (the sum of the positive ones' ranks) less its mean
    n(n+1)/4, moved 0.5 toward 0 (continuity correction), over its standard deviation with
    the tie correction, sqrt(n(n+1)(2n+1)/24 - sum(t^3 - t)/48) over the groups of t tied
    ranks. NaN when every remaining magnitude ties with zero spread left."""
    import numpy as np
    from scipy.stats import rankdata

    x = np.asarray(d, dtype=float) - mu
    x = x[x != 0]
    n = len(x)
    if n == 0:
        return 0.0
    r = rankdata(np.abs(x))
    z = float(r[x > 0].sum()) - n * (n + 1) / 4
    z -= math.copysign(0.5, z) if z != 0 else 0.0
    _, t = np.unique(r, return_counts=True)
    var = n * (n + 1) * (2 * n + 1) / 24 - float(np.sum(t.astype(float) ** 3 - t)) / 48
    return z / math.sqrt(var) if var > 0 else math.nan


def _root(f, lo: float, hi: float) -> float | None:
    """Where the step function ``f`` changes sign between ``lo`` and ``hi`` (R's uniroot);
    None without a change of sign."""
    from scipy.optimize import brentq

    flo, fhi = f(lo), f(hi)
    if flo == 0:
        return lo
    if fhi == 0:
        return hi
    if math.isnan(flo) or math.isnan(fhi) or (flo > 0) == (fhi > 0):
        return None
    return float(brentq(f, lo, hi, xtol=1e-12 * max(1.0, abs(lo), abs(hi)), maxiter=500))


def _hodges_lehmann_normal(nz, level: float) -> tuple[float, float | None, float | None, float]:
    """R's wilcox.test(conf.int = TRUE) where it leaves the exact distribution (ties among
    the magnitudes, or more than WILCOXON_EXACT_MAX differences): the estimate is the centre
    whose standardised statistic (signed_rank_z) is 0, the interval the centres where it
    crosses the normal quantiles of ``level``, all found by root-finding over the range of
    the differences; where the quantiles lie beyond the statistic's reach, alpha doubles
    until they do, as R does, and the achieved level is what is left. Returns estimate,
    low, high, achieved level."""
    import numpy as np
    from scipy import stats

    lo, hi = float(min(nz)), float(max(nz))
    est = _root(lambda mu: signed_rank_z(nz, mu), lo, hi)
    alpha = 1 - level
    while alpha < 1:
        zq = float(stats.norm.isf(alpha / 2))
        if signed_rank_z(nz, lo) - zq >= 0 and signed_rank_z(nz, hi) + zq <= 0:
            break
        alpha *= 2
    if alpha >= 1:
        return (est if est is not None else float(np.median(nz))), None, None, 0.0
    zq = float(stats.norm.isf(alpha / 2))
    low = _root(lambda mu: signed_rank_z(nz, mu) - zq, lo, hi)
    high = _root(lambda mu: signed_rank_z(nz, mu) + zq, lo, hi)
    return (est if est is not None else float(np.median(nz))), low, high, 1 - alpha


#: up to this many nonzero differences the interval's k comes from the exact null
#: distribution, beyond it from the normal approximation: the rule scipy.stats.wilcoxon's
#: method="auto" uses for its p (and R's wilcox.test, n < 50), so that the p and the
#: interval come from the same distribution and agree on whether 0 is excluded
WILCOXON_EXACT_MAX = 50


def signed_rank_counts(n: int) -> list[int]:
    """counts[w] = how many of the 2^n sign patterns of the ranks 1..n give the signed-rank
    statistic W+ = w (0 <= w <= n(n+1)/2), the exact null distribution without ties.

    Computed here because scipy exposes it only privately (scipy.stats._wilcoxon's
    WilcoxonDistribution, whose name and signature have changed between releases). The
    standard dynamic programme: adding rank r, each pattern either leaves it out of W+ or
    adds r. Python integers, so the counts stay exact (they reach 2^n)."""
    counts = [1] + [0] * (n * (n + 1) // 2)
    top = 0
    for r in range(1, n + 1):
        top += r
        for w in range(top, r - 1, -1):  # downwards: each rank is added at most once
            counts[w] += counts[w - r]
    return counts


def _interval_rank(n: int, level: float) -> tuple[int, float, str]:
    """(k, achieved confidence, how k was found) of the two-sided ``level`` interval from
    the Walsh averages of ``n`` nonzero differences: the k-th smallest to the k-th largest.
    k - 1 is the largest c with 2 P(W+ <= c) <= 1 - level, so the interval covers with at
    least ``level`` (R's qsignrank(alpha / 2, n)); k is at least 1, and with n <= 5 the
    achieved level falls short of 95 % (2 / 2^n > 0.05), which the caller reports."""
    alpha = 1 - level
    total = n * (n + 1) // 2
    if n <= WILCOXON_EXACT_MAX:
        counts = signed_rank_counts(n)
        c, below = -1, 0  # below: the patterns with W+ <= c
        while c + 1 <= total and 2 * (below + counts[c + 1]) <= alpha * 2 ** n:
            c += 1
            below += counts[c]
        k = max(c + 1, 1)
        return k, 1 - 2 * sum(counts[:k]) / 2 ** n, "exact"
    from scipy import stats

    # normal approximation with continuity correction: P(W+ <= c) ~ Phi((c + 0.5 - mu) / sd)
    mu, sd = n * (n + 1) / 4, math.sqrt(n * (n + 1) * (2 * n + 1) / 24)
    c = math.floor(mu - 0.5 + float(stats.norm.ppf(alpha / 2)) * sd)
    k = max(c + 1, 1)
    return k, 1 - 2 * float(stats.norm.cdf((k - 1 + 0.5 - mu) / sd)), "normal"


def hodges_lehmann(d: Sequence[float], level: float = 0.95) -> dict | None:
    """The Hodges-Lehmann estimate of the differences' centre and its distribution-free
    interval, as R's wilcox.test(d, conf.int = TRUE): zero differences dropped (as
    wilcoxon_p's test drops them, so the interval and the p agree), the Walsh averages
    (d_i + d_j) / 2, i <= j, of the n that remain; the estimate their median, the interval
    their k-th smallest to k-th largest (_interval_rank). Returns estimate, low, high,
    level (the achieved confidence, at least ``level`` from 6 nonzero differences), n and
    method ("exact", "normal"); None with fewer than two differences. Every difference 0
    (identical runs): estimate and interval 0, level None (no distribution to take it
    from). One nonzero difference: the estimate, no interval (its level would be 0).

    Ties among |d| (counters can tie), or more than WILCOXON_EXACT_MAX of them: the
    estimate and the interval come from the normal approximation with the tie and
    continuity corrections, by root-finding, as R's do (_hodges_lehmann_normal; method
    "normal", the achieved level the nominal one)."""
    import numpy as np

    d = _clean(d)
    if len(d) < 2:
        return None
    nz = np.array([v for v in d if v != 0], dtype=float)
    n = len(nz)
    if n == 0:
        return {"estimate": 0.0, "low": 0.0, "high": 0.0, "level": None, "n": 0, "method": None}
    i, j = np.triu_indices(n)
    walsh = np.sort((nz[i] + nz[j]) / 2)
    est = float(np.median(walsh))
    if n == 1:
        return {"estimate": est, "low": None, "high": None, "level": None, "n": 1, "method": None}
    if not _exact(nz):
        est, low, high, achieved = _hodges_lehmann_normal(nz, level)
        return {"estimate": est, "low": low, "high": high, "level": achieved if low is not None else None,
                "n": n, "method": "normal"}
    k, achieved, method = _interval_rank(n, level)
    return {"estimate": est, "low": float(walsh[k - 1]), "high": float(walsh[len(walsh) - k]),
            "level": achieved, "n": n, "method": method}


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
    of a configuration's runs against the baseline's, each a dict seed -> value. Under
    "wilcoxon" the half-width is None: that test's interval is Hodges-Lehmann's
    (hodges_lehmann), which is not symmetric about any centre."""
    if test == "welch":
        return welch(list(x_by_seed.values()), list(base_by_seed.values()))
    d = paired_differences(x_by_seed, base_by_seed)
    if test == "wilcoxon":
        return wilcoxon_p(d), None
    return paired_t(d)


def summary(groups: dict, cols: list[str], keys: list[str], test: str = DEFAULT_TEST, unit=lambda k: "") -> list[dict]:
    """Per metric and configuration: the mean over the seeds, its standard deviation, the
    half-width of its 95 % confidence interval (Student's t with n-1 degrees of freedom);
    against the baseline (the first configuration) the change of the mean relative to the
    baseline's mean, the half-width of the change's 95 % interval (relative alike), the
    number of seeds paired, and ``test``'s p value. ``groups`` maps each configuration to a
    DataFrame with a column per metric and one ``seed`` (without it, rows pair by position).

    Under "wilcoxon" there is no half-width (``rel_change_ci95`` None); each entry has
    instead the Hodges-Lehmann estimate of the change (``rel_change_hl``), its interval's
    ends (``rel_change_ci_low``, ``rel_change_ci_high``), all relative to the baseline's
    mean, and the interval's achieved confidence (``rel_change_ci_level``, at least 0.95
    from 6 nonzero differences). The paired-t and Welch entries keep their keys as they
    were, so their CSV columns do not change."""
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
            rel = half = p = pairs = hl = None
            if c != cols[0]:
                rel = (mean - bmean) / scale if scale else None
                p, h = change_test(mine, base, test)
                half = h / scale if scale and h is not None else None
                pairs = len(set(mine) & set(base)) if test != "welch" else None
                if test == "wilcoxon":
                    hl = hodges_lehmann(paired_differences(mine, base))
            mark = "" if p is None else "**" if p < 0.01 else "*" if p < 0.05 else ""
            entry = {"metric": key, "unit": unit(key), "cell": c, "n": n, "mean": mean, "std": sd,
                     "ci95": ci, "rel_change_vs_first": rel, "rel_change_ci95": half, "n_paired": pairs,
                     "p_value": p, "significance": mark}
            if test == "wilcoxon":
                def relative(field: str):
                    x = hl[field] if hl else None
                    return x / scale if scale and x is not None else None

                entry.update(rel_change_hl=relative("estimate"), rel_change_ci_low=relative("low"),
                             rel_change_ci_high=relative("high"),
                             rel_change_ci_level=hl["level"] if hl and relative("low") is not None else None)
            out.append(entry)
    return out


def achieved_levels(summary_: list[dict]) -> list[float]:
    """The distinct achieved confidences of the Hodges-Lehmann intervals in a summary
    (--test wilcoxon's), smallest first; empty under the other tests."""
    return sorted({e["rel_change_ci_level"] for e in summary_ if e.get("rel_change_ci_level") is not None})


def legend(baseline: str, test: str, levels: Sequence[float] = ()) -> str:
    """The line under compare's title saying what ± and the stars are; under "wilcoxon"
    what the change and its [low, high] are, and ``levels``, the intervals' achieved
    confidences (achieved_levels)."""
    name, interval = TESTS[test]
    if test == "wilcoxon":
        if not levels:
            achieved = ""
        elif len(levels) == 1:
            achieved = f", achieved {levels[0] * 100:.1f} %"
        else:  # zero differences dropped leave some cells fewer pairs
            achieved = (f", achieved {levels[0] * 100:.1f} to {levels[-1] * 100:.1f} % by the cell's nonzero "
                        f"pairs" + (", one short of 95 % followed by its level" if levels[0] < 0.95 else ""))
        return (f"baseline {baseline}; ± after a mean is its 95 % confidence interval over the seeds (Student's t); "
                f"a change is the Hodges-Lehmann estimate (the median of the Walsh averages of the per-seed "
                f"differences: every cell runs the same seeds) with its distribution-free 95 % interval "
                f"[low, high]{achieved}; * p < 0.05, ** p < 0.01 against the baseline "
                f"({name.replace(' on the per-seed differences', '')})")
    same = "" if test == "welch" else ": every cell runs the same seeds"
    return (f"baseline {baseline}; ± after a mean is its 95 % confidence interval over the seeds (Student's t), "
            f"after a change the change's 95 % interval ({interval}{same}); * p < 0.05, ** p < 0.01 against "
            f"the baseline ({name.replace(' on the per-seed differences', '')})")
