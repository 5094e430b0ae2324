"""Platform loader: kernel arithmetic, built-in data, estimates, user-file errors.

Expected numbers are derived here from the formulas (data/SOURCES.md, linux-eas.md §2/§4)
or written out by hand, never taken from the loader's own helpers, so a wrong formula in
the package makes these tests fail.
"""

from __future__ import annotations

import copy
import filecmp
import json
from pathlib import Path
from typing import Any

import pytest

from hetsched.errors import InputError, UnknownNameError
from hetsched.platforms.loader import BUILTIN_DEVICE_INIT
from hetsched.platforms import (
    DATA_DIR,
    Platform,
    list_platforms,
    load_platform,
    platform_summaries,
    platform_summary,
)
from hetsched.platforms import em
from hetsched.platforms.estimates import ESTIMATES, BorrowedDpc, VoltageLine

# the project's shared/ folder sits beside the repository (as in CI)
SHARED = Path(__file__).resolve().parents[3] / "shared" / "platforms"
BUILTINS = [
    "exynos5422", "g12b-s922x", "gs101", "hikey960", "juno-r0", "juno-r2", "mt8173", "mt8183",
    "rk3399", "sc7180", "sdm670", "sdm845", "sm8150", "sm8250", "sm8350",
    "hetero-2cpu", "hetero-2cpu-homogeneous",  # paper 004's setups (estimated power)
]
RUNNABLE = [n for n in BUILTINS if n != "sm8350"]
ESTIMATED = {"sm8150", "sm8250", "g12b-s922x", "hetero-2cpu", "hetero-2cpu-homogeneous"}
PUBLISHED = {"juno-r0", "hikey960", "rk3399", "sc7180", "sdm845", "sdm670"}


def raw(name: str) -> dict[str, Any]:
    return json.loads((DATA_DIR / f"{name}.json").read_text())


def write(tmp_path: Path, doc: Any, name: str = "board.json") -> str:
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def minimal() -> dict[str, Any]:
    """A small valid user platform: DT power, two clusters."""
    return {
        "name": "test board",
        "clusters": [
            {"name": "little", "core": "a53", "cpus": [0, 1], "capacity_dmips_mhz": 500,
             "dynamic_power_coefficient": 100,
             "opps": [{"khz": 500000, "uv": 800000}, {"khz": 1000000, "uv": 900000},
                      {"khz": 1500000, "uv": 1000000}]},
            {"name": "big", "core": "a72", "cpus": [2, 3], "capacity_dmips_mhz": 1024,
             "dynamic_power_coefficient": 400,
             "opps": [{"khz": 800000, "uv": 800000}, {"khz": 2000000, "uv": 1100000}],
             "idle_states": [
                 {"name": "WFI", "level": "cpu", "entry_latency_us": None, "exit_latency_us": 1,
                  "min_residency_us": 1, "power_mw": None},
                 {"name": "sleep", "level": "cluster", "entry_latency_us": 100, "exit_latency_us": 200,
                  "min_residency_us": 900, "power_mw": None}]},
        ],
    }


# --- the list of built-ins and the data --------------------------------------------------


def test_list_platforms_is_the_sorted_file_stems():
    assert list_platforms() == sorted(BUILTINS)


@pytest.mark.skipif(not SHARED.is_dir(), reason="shared data not mounted")
def test_data_files_are_unchanged_copies():
    for p in SHARED.glob("*.json"):
        assert filecmp.cmp(p, DATA_DIR / p.name, shallow=False), p.name
    assert filecmp.cmp(SHARED / "README.md", DATA_DIR / "SOURCES.md", shallow=False)


@pytest.mark.parametrize("name", RUNNABLE)
def test_every_builtin_loads(name):
    p = load_platform(name)
    assert isinstance(p, Platform)
    assert p.name == name
    assert p.description == raw(name)["name"]
    assert p.soc == raw(name)["soc"]
    assert p.sources and all("repo" in s for s in p.sources)
    assert p.notes
    assert p.power_model == ("estimated" if name in ESTIMATED else "published" if name in PUBLISHED else "dt")


def test_sm8350_fails_clearly():
    with pytest.raises(InputError) as ei:
        load_platform("sm8350")
    err = ei.value
    assert err.source.endswith("sm8350.json")
    assert err.field == "clusters[0].opps"
    assert err.expected == "an OPP table (none is published for this SoC)"
    assert "\n" not in str(err)


def test_summaries_cover_every_builtin_and_flag_sm8350():
    rows = {r["name"]: r for r in platform_summaries()}
    assert sorted(rows) == sorted(BUILTINS)
    bad = rows["sm8350"]
    assert bad["runnable"] is False and "clusters[0].opps" in bad["reason"]
    assert bad["cpus"] == "4+3+1"
    assert "OPP table" in bad["missing"]
    for name in RUNNABLE:
        assert rows[name]["runnable"] is True and rows[name]["reason"] is None


def test_summary_fields():
    s = load_platform("juno-r0").summary()
    assert s["cpus"] == "4+2"
    assert s["cores"] == "4x cortex-a53 + 2x cortex-a57"
    assert s["power_model"] == "published"
    assert "energy table" in s["published"] and "idle power" in s["published"]
    assert s["estimated"] == [] and s["missing"] == []
    s = platform_summary("sm8150")
    assert s["cpus"] == "4+3+1"
    assert s["estimated"] == ["OPP voltages"]
    # sm8150's idle power comes from the Pixel 4 kernel's idle-cost-data (idle_power.py)
    assert "OPP voltages" in s["missing"] and "idle power" not in s["missing"]
    assert s["idle_power_model"] == "published"
    assert platform_summary("g12b-s922x")["estimated"] == ["dynamic-power-coefficient", "idle power"]


# --- capacity (arch_topology.c) ----------------------------------------------------------


def test_juno_capacity_worked_example():
    # DT binding example: A53 578 dmips/MHz at 850 MHz against A57 1024 at 1100 MHz.
    expected_little = (578 * 850000 * 1024) // (1024 * 1100000)
    assert expected_little == 446
    p = load_platform("juno-r0")
    caps = {c.name: c.capacity_orig for c in p.clusters}
    assert caps == {"little": 446, "big": 1024}


def test_gs101_capacities_by_hand():
    # gs101: A55 250 @ 1803 MHz, A76 620 @ 2253 MHz, X1 1024 @ 2802 MHz.
    biggest = 1024 * 2802000
    little = 250 * 1803000 * 1024 // biggest
    mid = 620 * 2253000 * 1024 // biggest
    assert (little, mid) == (160, 498)  # 160.87..., 498.5...: truncated
    caps = [c.capacity_orig for c in load_platform("gs101").clusters]
    assert caps == [little, mid, 1024]


def test_capacity_uses_highest_simulated_opp_sc7180():
    # sc7180 big: 2553.6 MHz has no published power, so f_max is 2400 MHz.
    p = load_platform("sc7180")
    little, big = p.clusters
    assert big.fmax_khz == 2400000 and little.fmax_khz == 1804800
    assert little.capacity_orig == 415 * 1804800 * 1024 // (1024 * 2400000)
    assert any("2553600" in n and "f_max" in n for n in p.notes)


def test_normalized_capacities_biggest_is_1024():
    assert em.normalized_capacities([(1024, 2000000), (1024, 1000000), (300, 2000000)]) == [1024, 512, 300]


# --- power --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dpc, mv, mhz, expected",
    [
        (140, 820, 450, 42361),   # SOURCES.md computed example, A53 450 MHz
        (140, 1000, 850, 119000),
        (530, 820, 450, 160367),
        (530, 1000, 1100, 583000),  # A57 1100 MHz
    ],
)
def test_dt_power_worked_examples(dpc, mv, mhz, expected):
    assert dpc * mv * mv * mhz // 10**6 == expected
    assert em.dt_power_uw(dpc, mv * 1000, mhz * 1000) == expected


def test_dt_power_truncates_like_the_kernel():
    # mV = uV/1000 and MHz = Hz/10^6 are truncated before multiplying.
    assert em.dt_power_uw(100, 1000999, 403200) == 100 * 1000 * 1000 * 403 // 10**6  # 40300, not 40320
    assert em.dt_power_uw(263, 859000, 507000) == 263 * 859 * 859 * 507 // 10**6


def test_juno_without_table_uses_dt_formula(tmp_path):
    doc = raw("juno-r0")
    for c in doc["clusters"]:
        del c["em_table"]
    p = load_platform(write(tmp_path, doc))
    assert p.power_model == "dt"
    little, big = p.clusters
    assert little.opps[0].power_uw == 42361
    assert big.opps[-1].power_uw == 583000
    assert all(o.cluster_power_uw == 0 for c in p.clusters for o in c.opps)


def test_juno_published_table_and_idle_mapping():
    p = load_platform("juno-r0")
    little = p.clusters[0]
    assert [o.power_uw for o in little.opps] == [33000, 46000, 61000, 76000, 93000]
    assert [o.cluster_power_uw for o in little.opps] == [26000, 30000, 39000, 47000, 57000]
    wfi, cpu_sleep, cluster_sleep = little.idle_states
    assert (wfi.name, wfi.exit_latency_ns, wfi.target_residency_ns) == ("WFI", 1000, 1000)
    assert (wfi.power_uw, wfi.cluster_power_uw) == (6000, 56000)
    assert cpu_sleep.exit_latency_ns == (300 + 1200) * 1000
    assert cpu_sleep.target_residency_ns == 2000 * 1000
    assert cluster_sleep.level == "cluster" and cluster_sleep.cluster_power_uw == 17000
    assert p.clusters[1].idle_states[0].power_uw == 15000


def test_every_dt_platform_matches_the_formula():
    for name in RUNNABLE:
        p = load_platform(name)
        for c in p.clusters:
            if c.power_source == "published":
                continue
            for o in c.opps:
                assert o.power_uw == c.dynamic_power_coefficient * (o.uv // 1000) ** 2 * (o.khz // 1000) // 10**6


def test_published_opp_set_rule():
    # sdm845 gold: the published table covers 24 of the 32 mainline OPPs.
    gold = load_platform("sdm845").clusters[1]
    table = {e["khz"]: e["power_mw"] for e in raw("sdm845")["clusters"][1]["em_table"]}
    assert [o.khz for o in gold.opps] == sorted(table)
    assert all(o.power_uw == table[o.khz] * 1000 for o in gold.opps)
    # sdm670 gold: table rows above the mainline maximum (to 2611.2 MHz) are dropped.
    p = load_platform("sdm670")
    assert p.clusters[1].fmax_khz == 1996800
    assert any("2611200" in n for n in p.notes)
    # rk3399: table is for the OP1 bin; the standard OPPs are kept.
    rk = load_platform("rk3399")
    assert [c.fmax_khz for c in rk.clusters] == [1416000, 1800000]


def test_sc7180_runs_are_averaged():
    p = load_platform("sc7180")
    little = p.clusters[0]
    assert little.opps[0].khz == 576000
    assert little.opps[0].power_uw == (20 + 26) * 1000 // 2
    assert 300000 not in [o.khz for o in little.opps]


# --- cost and inefficiency (em_compute_costs, v6.12) --------------------------------------


def test_costs_on_a_hand_made_table():
    power = [100, 300, 350, 1000]
    perf = [256, 512, 768, 1024]
    # cost = 10 * power // perf: 1000//256=3, 3000//512=5, 3500//768=4, 10000//1024=9
    states = em.em_compute_costs(power, perf)
    assert [s.cost for s in states] == [3, 5, 4, 9]
    # from the top: 9 keeps, 4 < 9 keeps, 5 >= 4 inefficient, 3 < 4 keeps
    assert [s.inefficient for s in states] == [False, True, False, False]


def test_equal_cost_is_inefficient():
    states = em.em_compute_costs([200, 400], [512, 1024])  # both cost 3
    assert [s.cost for s in states] == [3, 3]
    assert [s.inefficient for s in states] == [True, False]


def test_costs_in_a_loaded_platform(tmp_path):
    doc = minimal()
    p = load_platform(write(tmp_path, doc))
    little = p.clusters[0]
    cap = little.capacity_orig
    assert cap == 500 * 1500000 * 1024 // (1024 * 2000000)
    for o in little.opps:
        assert o.perf == cap * o.khz // 1500000
        assert o.cost == 10 * o.power_uw // o.perf
    # a state is inefficient iff some higher state has cost <= its cost
    for c in load_platform("sdm845").clusters:
        for i, o in enumerate(c.opps):
            assert o.inefficient == any(h.cost <= o.cost for h in c.opps[i + 1:])
    gold = {o.khz: o for o in load_platform("sdm845").clusters[1].opps}
    assert gold[2476800].inefficient and not gold[2553600].inefficient


# --- estimates ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(ESTIMATED))
def test_estimated_platforms_say_so(name):
    p = load_platform(name)
    assert p.power_model == "estimated"
    assert any("ESTIMATED" in n for n in p.notes)
    assert all(c.power_source == "estimated" for c in p.clusters)
    assert p.summary()["estimated"]


def test_estimated_voltage_line_sm8150():
    p = load_platform("sm8150")
    silver, gold, prime = p.clusters
    # below the SC7180 silver lowest measured OPP (576 MHz): the 596 mV floor
    assert silver.opps[0].khz == 300000 and silver.opps[0].uv == 596000
    # 1785.6 MHz on the line 596 mV @ 576 MHz -> 884 mV @ 1804.8 MHz
    assert silver.opps[-1].uv == 596000 + 288000 * (1785600 - 576000) // (1804800 - 576000)
    # prime 2841.6 MHz on the gold line extended: about 1057 mV
    assert prime.opps[-1].uv // 1000 == 1056
    for c in p.clusters:
        uvs = [o.uv for o in c.opps]
        assert uvs == sorted(uvs)
        for o in c.opps:
            assert o.power_uw == c.dynamic_power_coefficient * (o.uv // 1000) ** 2 * (o.khz // 1000) // 10**6


def test_estimate_anchors_match_the_data():
    # every anchor point is a published (khz, uv) pair of the platform it names
    for e in ESTIMATES.values():
        for v in e.values():
            if isinstance(v, VoltageLine):
                src = {c["name"]: c for c in raw(v.from_platform)["clusters"]}[v.from_cluster]
                opps = {o["khz"]: o["uv"] for o in src["opps"]}
                assert opps[v.khz_lo] == v.uv_lo and opps[v.khz_hi] == v.uv_hi
                assert v.uv_lo == min(uv for uv in opps.values() if uv is not None)
    mt = {c["name"]: c["dynamic_power_coefficient"] for c in raw("mt8183")["clusters"]}
    for e in ESTIMATES.values():
        for v in e.values():
            if isinstance(v, BorrowedDpc):
                assert mt[v.from_cluster] == v.dpc and v.from_platform == "mt8183"


def test_g12b_borrowed_dpc():
    little, big = load_platform("g12b-s922x").clusters
    assert (little.dynamic_power_coefficient, big.dynamic_power_coefficient) == (84, 211)


def test_user_copy_of_estimated_platform_is_refused(tmp_path):
    path = write(tmp_path, raw("sm8150"))
    with pytest.raises(InputError) as ei:
        load_platform(path)
    assert ei.value.field == "clusters[0].opps[0].uv"
    assert str(ei.value) == f"{path}: clusters[0].opps[0].uv: expected a voltage in µV (or an em_table), got null"
    path = write(tmp_path, raw("g12b-s922x"), "g12b.json")
    with pytest.raises(InputError) as ei:
        load_platform(path)
    assert ei.value.field == "clusters[0].dynamic_power_coefficient"


def test_published_without_voltages_is_fine():
    # sdm845/sdm670 have no OPP voltages but a published table.
    for name in ("sdm845", "sdm670"):
        p = load_platform(name)
        assert p.power_model == "published"
        assert all(o.uv is None for c in p.clusters for o in c.opps)
        assert any("Qualcomm dynamic-power-coefficient" in n for n in p.notes)


def test_unpublished_idle_power_of_a_user_file_is_noted(tmp_path):
    # a user file is never completed with estimates: its idle power stays 0 and is noted
    p = load_platform(write(tmp_path, raw("gs101"), "gs101.json"))
    assert p.idle_power_model == "none"
    assert "idle power not published: counted as 0" in p.notes
    assert all(s.power_uw == 0 and s.cluster_power_uw == 0 for c in p.clusters for s in c.idle_states)
    assert "idle power not published: counted as 0" not in load_platform("juno-r0").notes


# --- idle power (idle_power.py) --------------------------------------------------------------


def test_no_builtin_idles_at_zero_watts_unlabelled():
    """Every runnable built-in draws power in WFI on every cluster, and its idle power is
    either published or labelled estimated (summary, notes, result.json's idle_power_model)."""
    for name in RUNNABLE:
        p = load_platform(name)
        assert p.idle_power_model in ("published", "estimated"), name
        for c in p.clusters:
            assert c.idle_states[0].name == "WFI" and c.idle_states[0].power_uw > 0, (name, c.name)
        estimated = p.idle_power_model == "estimated"
        assert ("idle power" in p.summary()["estimated"]) == estimated, name
        assert any(n.startswith(f"cluster {c.name}: ESTIMATED idle power") for c in p.clusters
                   for n in p.notes) == estimated, name
        assert not any("idle power" in n and "counted as 0" in n for n in p.notes), name


def test_legacy_idle_costs_mapped_from_the_file():
    # Legacy lookup: cpuidle state i reads entry i+1 (entry 0 = active idle), x1000 as em_table.
    # sdm845 (Pixel 3 sdm845-v2.dtsi): silver cpu <10 8 6 4>, cluster <4 3 2 1>;
    #   states WFI, rail collapse, cluster-sleep -> entries 1, 2, 3.
    silver = load_platform("sdm845").clusters[0]
    assert [(s.power_uw, s.cluster_power_uw) for s in silver.idle_states] == [
        (8000, 3000), (6000, 2000), (4000, 1000)]
    # rk3399 (ChromiumOS rk3399-sched-energy.dtsi) big: cpu <24 24 0 0>, cluster <10 10 9 0>.
    big = load_platform("rk3399").clusters[1]
    assert [(s.power_uw, s.cluster_power_uw) for s in big.idle_states] == [
        (24000, 10000), (0, 9000), (0, 0)]
    # sdm670 (Pixel 3a sdm670.dtsi) gold: cpu <30 25 20 15 10>, cluster <5 4 3 2 1>;
    #   three states read entries 1..3, the two deepest entries are unused.
    gold = load_platform("sdm670").clusters[1]
    assert [(s.power_uw, s.cluster_power_uw) for s in gold.idle_states] == [
        (25000, 4000), (20000, 3000), (15000, 2000)]
    # hikey960 (LISA hikey960_energy.py, keyed by state): little WFI 6 (cluster 20),
    #   cpu-sleep 0 (20), cluster-sleep 0 (0).
    little = load_platform("hikey960").clusters[0]
    assert [(s.power_uw, s.cluster_power_uw) for s in little.idle_states] == [
        (6000, 20000), (0, 20000), (0, 0)]
    assert load_platform("hikey960").idle_power_model == "published"


def test_sm8150_idle_costs_scaled_to_the_formula_power():
    # Pixel 4 sm8150.dtsi core-cost0: idle-cost-data <18 14 12>, busy-cost 47 at 768 MHz.
    # sm8150 silver at 768 MHz: V = 596000 + 288000*(768000-576000)//1228800 = 641000 uV;
    #   P = 232 * 641 * 641 * 768 // 10^6 = 73209 uW.
    # WFI (entry 1) = 14 * 73209 // 47 = 21806; rail collapse (entry 2) and cluster-sleep
    # (clamped to entry 2) = 12 * 73209 // 47 = 18691.  No cluster term (the DT formula has none).
    silver = load_platform("sm8150").clusters[0]
    assert next(o.power_uw for o in silver.opps if o.khz == 768000) == 73209
    assert [(s.power_uw, s.cluster_power_uw) for s in silver.idle_states] == [
        (21806, 0), (18691, 0), (18691, 0)]
    # core-cost2 (prime): <110 90 70>, busy-cost 418 at 1286.4 MHz:
    #   V = 596000 + 360000*(1286400-825600)//1574400 = 701365 uV -> 701 mV;
    #   P = 421 * 701 * 701 * 1286 // 10^6 = 266047 uW (206879821 * 1286 = 266047449806);
    #   WFI = 90 * 266047 // 418 = 23944230 // 418 = 57282.
    prime = load_platform("sm8150").clusters[2]
    assert next(o.power_uw for o in prime.opps if o.khz == 1286400) == 266047
    assert prime.idle_states[0].power_uw == 57282


def test_wfi_leakage_estimate():
    # gs101 little (Cortex-A55): lowest OPP 300 MHz at 537.5 mV, dpc 70:
    #   P = 70 * 537 * 537 * 300 // 10^6 = 6055 uW; WFI = 6055 * 6 // 33 = 1100 (Juno r0 A53's
    #   measured WFI 6 / busy 33 at 450 MHz).  c2 (power-down) = 0.
    p = load_platform("gs101")
    little, _, big = p.clusters
    assert [(s.name, s.power_uw, s.cluster_power_uw) for s in little.idle_states] == [
        ("WFI", 1100, 0), ("c2", 0, 0)]
    # big (Cortex-X1): 500 MHz at 500 mV, dpc 650: P = 650*500*500*500 // 10^6 = 81250 uW;
    #   WFI = 81250 * 15 // 168 = 7254 (Juno r0 A57: WFI 15 / busy 168).
    assert big.idle_states[0].power_uw == 7254
    assert p.idle_power_model == "estimated" and p.power_model == "dt"
    # the clock-modulated Xeon idles like the unmodulated part (same voltage):
    #   59999264 * 15 // 168 = 5357077 uW on both
    x = load_platform("hetero-2cpu")
    assert [c.idle_states[0].power_uw for c in x.clusters] == [5357077, 5357077]


def test_juno_fractions_match_the_juno_file():
    # the estimate's fractions are Juno r0's own WFI / lowest-OPP costs
    from hetsched.platforms.idle_power import JUNO_R0_A53_WFI, JUNO_R0_A57_WFI
    j = load_platform("juno-r0")
    for est, c in ((JUNO_R0_A53_WFI, j.clusters[0]), (JUNO_R0_A57_WFI, j.clusters[1])):
        assert (est.num * 1000, est.den * 1000) == (c.idle_states[0].power_uw, c.opps[0].power_uw)


def test_exynos_idle_entry_latency_null_counts_as_zero():
    little = load_platform("exynos5422").clusters[0]
    assert [(s.name, s.exit_latency_ns, s.target_residency_ns) for s in little.idle_states] == [
        ("WFI", 1000, 1000), ("C1", 700000, 2500000)]


# --- names, variants, paths ---------------------------------------------------------------


def test_unknown_name():
    with pytest.raises(UnknownNameError) as ei:
        load_platform("juno-r1")
    assert ei.value.source == "--platform" and ei.value.field == "platform"
    assert "juno-r0" in ei.value.expected and "did you mean" in ei.value.expected
    with pytest.raises(UnknownNameError):
        load_platform("nosuch:variant")


def test_variant_syntax_is_reserved():
    # paper 001 defines ':switcher' (tests/test_switcher.py); any other variant is an error
    assert load_platform("exynos5422:switcher").switcher
    with pytest.raises(InputError) as ei:
        load_platform("exynos5422:cluster")
    assert not isinstance(ei.value, UnknownNameError)
    assert "exynos5422:switcher" in str(ei.value)


def test_relative_json_path_is_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path, minimal(), "mine.json")
    p = load_platform("mine.json")
    assert p.name == "mine" and p.power_model == "dt" and p.description == "test board"


# --- user-file validation ------------------------------------------------------------------


def _error(tmp_path: Path, doc: Any) -> InputError:
    path = write(tmp_path, doc)
    with pytest.raises(InputError) as ei:
        load_platform(path)
    err = ei.value
    msg = str(err)
    assert "\n" not in msg and msg.startswith(path + ": ") and f": {err.field}: expected " in msg
    return err


def test_malformed_json(tmp_path):
    err = _error(tmp_path, '{"clusters": [\n  {"name": "a",,}\n]}')
    assert err.field == "json"
    assert err.expected.startswith("valid JSON (line 2 col ")


def test_missing_file(tmp_path):
    with pytest.raises(InputError) as ei:
        load_platform(str(tmp_path / "nope.json"))
    assert ei.value.field == "file"


def test_top_level_not_object(tmp_path):
    assert _error(tmp_path, [1, 2]).field == "(top level)"


def test_missing_clusters(tmp_path):
    err = _error(tmp_path, {"name": "x"})
    assert err.field == "clusters"


@pytest.mark.parametrize(
    "cpus0, cpus1, field",
    [
        ([0, 1], [1, 3], "clusters[1].cpus"),  # 1 twice
        ([0, 1], [2, 4], "clusters[1].cpus"),  # 3 missing, 4 out of range
        ([0, -1], [2, 3], "clusters[0].cpus"),  # negative
        ("0-1", [2, 3], "clusters[0].cpus"),  # wrong type
        ([], [0, 1, 2, 3], "clusters[0].cpus"),  # empty
    ],
)
def test_cpus_must_be_0_to_n_minus_1_once(tmp_path, cpus0, cpus1, field):
    doc = minimal()
    doc["clusters"][0]["cpus"] = cpus0
    doc["clusters"][1]["cpus"] = cpus1
    assert _error(tmp_path, doc).field == field


def test_opps_ascending_and_positive(tmp_path):
    doc = minimal()
    doc["clusters"][0]["opps"][1]["khz"] = 400000
    err = _error(tmp_path, doc)
    assert err.field == "clusters[0].opps[1].khz" and "ascending" in err.expected
    doc = minimal()
    doc["clusters"][1]["opps"][0]["khz"] = 0
    assert _error(tmp_path, doc).field == "clusters[1].opps[0].khz"
    doc = minimal()
    doc["clusters"][1]["opps"][0]["khz"] = "800000"
    assert _error(tmp_path, doc).field == "clusters[1].opps[0].khz"
    doc = minimal()
    doc["clusters"][0]["opps"] = []
    assert _error(tmp_path, doc).field == "clusters[0].opps"


@pytest.mark.parametrize("value", [None, 0, -5, 1.5, "1024", True])
def test_capacity_dmips_mhz_required_positive_int(tmp_path, value):
    doc = minimal()
    if value is None:
        del doc["clusters"][1]["capacity_dmips_mhz"]
    else:
        doc["clusters"][1]["capacity_dmips_mhz"] = value
    assert _error(tmp_path, doc).field == "clusters[1].capacity_dmips_mhz"


def test_missing_voltage_names_file_and_field(tmp_path):
    doc = minimal()
    doc["clusters"][0]["opps"][2]["uv"] = None
    err = _error(tmp_path, doc)
    assert err.field == "clusters[0].opps[2].uv"
    assert str(err).endswith("clusters[0].opps[2].uv: expected a voltage in µV (or an em_table), got null")


def test_mixed_power_sources_refused(tmp_path):
    doc = minimal()
    doc["clusters"][1]["em_table"] = [{"khz": 800000, "power_mw": 100}, {"khz": 2000000, "power_mw": 900}]
    err = _error(tmp_path, doc)
    assert err.field == "clusters[0].em_table"


def test_em_table_with_no_matching_opp(tmp_path):
    doc = minimal()
    for c in doc["clusters"]:
        c["em_table"] = [{"khz": 123, "power_mw": 1}]
    assert _error(tmp_path, doc).field == "clusters[0].em_table"


def test_user_em_table_published(tmp_path):
    doc = minimal()
    doc["clusters"][0]["em_table"] = [{"khz": 500000, "power_mw": 10.5}, {"khz": 1500000, "power_mw": 80}]
    doc["clusters"][1]["em_table"] = [{"khz": 800000, "power_mw": 100, "cluster_power_mw": 7},
                                      {"khz": 2000000, "power_mw": 900, "cluster_power_mw": 20}]
    p = load_platform(write(tmp_path, doc))
    assert p.power_model == "published"
    assert [(o.khz, o.power_uw) for o in p.clusters[0].opps] == [(500000, 10500), (1500000, 80000)]
    assert p.clusters[1].opps[0].cluster_power_uw == 7000
    assert any("1000000 kHz have no published power" in n for n in p.notes)


def test_idle_state_rules(tmp_path):
    doc = minimal()
    # little has no idle states: the driver's WFI is added
    doc["clusters"][1]["idle_states"][1]["wakeup_latency_us"] = 250
    p = load_platform(write(tmp_path, doc))
    assert [s.name for s in p.clusters[0].idle_states] == ["WFI"]
    assert any("WFI" in n and "added" in n for n in p.notes)
    assert p.clusters[1].idle_states[1].exit_latency_ns == 250000  # wakeup wins over 100+200
    doc["clusters"][1]["idle_states"][1]["level"] = "package"
    assert _error(tmp_path, doc).field == "clusters[1].idle_states[1].level"
    doc = minimal()
    doc["clusters"][1]["idle_states"][1]["min_residency_us"] = 0
    assert _error(tmp_path, doc).field == "clusters[1].idle_states[1].min_residency_us"
    doc = minimal()
    doc["clusters"][1]["idle_states"][1]["exit_latency_us"] = None
    assert _error(tmp_path, doc).field == "clusters[1].idle_states[1].exit_latency_us"


#: DynamIQ parts whose cluster-level idle state is the CLUSTER_PD over every CPU (the DT's
#: PSCI node), not a state of one frequency domain
DYNAMIQ_ONE_DOMAIN = {"sdm845", "sdm670", "sc7180", "sm8150", "sm8250"}


@pytest.mark.parametrize("name", RUNNABLE)
def test_idle_domains_of_the_builtins(name):
    p = load_platform(name)
    if name in DYNAMIQ_ONE_DOMAIN:
        assert p.idle_domains == (tuple(range(len(p.clusters))),)
        assert p.to_spec()["idle_domains"] == [list(range(len(p.clusters)))]
        assert any("one power domain over clusters" in n and f"CPUs 0-{p.nr_cpus - 1}" in n for n in p.notes)
    else:
        # classic big.LITTLE: each cluster powers down on its own (or has no cluster state)
        assert p.idle_domains == () and "idle_domains" not in p.to_spec()


def test_sm8150_cluster_state_needs_all_eight_cpus_idle():
    # CPU 7 alone (prime) and the gold CPUs stay up while a silver CPU runs: at most
    # their rail power collapse (241 + 1461 µs), never the 3263 + 6562 µs domain state
    from hetsched import Simulation

    w = {"name": "one", "duration_ns": None, "timers": 1, "tasks": [
        {"name": "s", "policy": "other", "nice": 0, "rt_priority": 0, "cpus": [0], "util_min": None,
         "util_max": None, "delay_ns": 0, "loop": -1, "phases": [{"loop": 1, "events": [
             {"run": 20_000_000}, {"sleep": 1_000_000}]}]}]}
    doc = Simulation("sm8150", w, "cfs", governor="performance", lower_bound=False).run(1.0).doc
    for c in doc["cpus"][4:]:
        assert c["idle_residency_s"].get("cluster-sleep-0", 0.0) < 0.05, c["idle_residency_s"]


def test_user_idle_domains(tmp_path):
    doc = minimal()
    sleep = copy.deepcopy(doc["clusters"][1]["idle_states"])
    doc["clusters"][0]["idle_states"] = sleep
    doc["idle_domains"] = [[0, 1, 2, 3]]
    p = load_platform(write(tmp_path, doc))
    assert p.idle_domains == ((0, 1),) and p.to_spec()["idle_domains"] == [[0, 1]]
    doc["idle_domains"] = [[0, 1], [2, 3]]  # each cluster alone: nothing shared
    assert load_platform(write(tmp_path, doc)).idle_domains == ()
    for bad in ([[0, 1, 2]], [[0, 1, 9]], [[0, 1], [0, 1, 2, 3]], [[]], [0, 1], "all"):
        doc["idle_domains"] = bad
        assert _error(tmp_path, doc).field.startswith("idle_domains"), bad
    doc["idle_domains"] = [[0, 1, 2, 3]]
    doc["clusters"][0]["idle_states"][1]["exit_latency_us"] = 300  # 100 + 300 != 100 + 200
    assert _error(tmp_path, doc).field == "idle_domains[0]"


#: DynamIQ parts: every core's L2 leads to the DSU's one L3
DYNAMIQ_SHARED_LLC = DYNAMIQ_ONE_DOMAIN | {"gs101", "sm8350"}


@pytest.mark.parametrize("name", RUNNABLE)
def test_shared_llc_of_the_builtins(name):
    p = load_platform(name)
    assert p.shared_llc == (name in DYNAMIQ_SHARED_LLC)
    assert p.to_spec().get("shared_llc", False) == (name in DYNAMIQ_SHARED_LLC)


def test_user_shared_llc(tmp_path):
    doc = minimal()
    assert not load_platform(write(tmp_path, doc)).shared_llc
    doc["shared_llc"] = True
    assert load_platform(write(tmp_path, doc)).to_spec()["shared_llc"] is True
    for bad in ("yes", 1, None):
        doc["shared_llc"] = bad
        assert _error(tmp_path, doc).field == "shared_llc", bad


def test_duplicate_cluster_names(tmp_path):
    doc = minimal()
    doc["clusters"][1]["name"] = "little"
    assert _error(tmp_path, doc).field == "clusters[1].name"


def test_wrong_types(tmp_path):
    doc = minimal()
    doc["clusters"][0]["dynamic_power_coefficient"] = "100"
    assert _error(tmp_path, doc).field == "clusters[0].dynamic_power_coefficient"
    doc = minimal()
    doc["clusters"][0]["opps"][0]["uv"] = 8.5e5
    assert _error(tmp_path, doc).field == "clusters[0].opps[0].uv"
    doc = minimal()
    doc["clusters"] = {"little": {}}
    assert _error(tmp_path, doc).field == "clusters"
    doc = minimal()
    doc["clusters"][0] = "little"
    assert _error(tmp_path, doc).field == "clusters[0]"


# --- to_spec --------------------------------------------------------------------------------

SPEC_KEYS = {"name", "power_model", "clusters"}
CLUSTER_KEYS = {"name", "cpus", "capacity_orig", "opps", "idle_states"}
OPP_KEYS = {"khz", "power_uw", "cluster_power_uw"}
MEASURED_WAKEUPS = ("gs101", "sm8150")
IDLE_KEYS = {"name", "level", "exit_latency_ns", "target_residency_ns", "power_uw", "cluster_power_uw"}


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@pytest.mark.parametrize("name", RUNNABLE)
def test_to_spec_shape(name):
    spec = load_platform(name).to_spec()
    assert json.loads(json.dumps(spec)) == spec
    assert set(spec) == (SPEC_KEYS | ({"idle_domains"} if name in DYNAMIQ_ONE_DOMAIN else set())
                         | ({"shared_llc"} if name in DYNAMIQ_SHARED_LLC else set())
                         | ({"device_init"} if name in BUILTIN_DEVICE_INIT else set()))
    assert spec["name"] == name and spec["power_model"] in ("published", "dt", "estimated")
    cpus = sorted(cpu for c in spec["clusters"] for cpu in c["cpus"])
    assert cpus == list(range(len(cpus)))
    assert max(c["capacity_orig"] for c in spec["clusters"]) == 1024
    for c in spec["clusters"]:
        assert set(c) == CLUSTER_KEYS
        assert all(_is_int(x) for x in c["cpus"])
        assert _is_int(c["capacity_orig"]) and 1 <= c["capacity_orig"] <= 1024
        khz = [o["khz"] for o in c["opps"]]
        assert khz and khz == sorted(set(khz))
        for o in c["opps"]:
            assert set(o) == OPP_KEYS
            assert all(_is_int(v) for v in o.values())
            assert 0 < o["power_uw"] <= 64_000_000 and o["cluster_power_uw"] >= 0
        assert c["idle_states"][0]["name"] == "WFI"
        assert c["idle_states"][0]["exit_latency_ns"] == 1000
        residency = [s["target_residency_ns"] for s in c["idle_states"]]
        assert residency == sorted(residency)
        for s in c["idle_states"]:
            # the SoCs whose phones' traces were measured (measured/idle_wakeups.json)
            measured = name in MEASURED_WAKEUPS and s["level"] == "cpu"
            assert set(s) == IDLE_KEYS | ({"measured_wakeup_ns"} if measured else set())
            assert s["level"] in ("cpu", "cluster")
            assert all(_is_int(s[k]) for k in set(s) - {"name", "level"})


def test_to_spec_juno_matches_interface_example():
    spec = load_platform("juno-r0").to_spec()
    little = spec["clusters"][0]
    assert little["name"] == "little" and little["cpus"] == [0, 3, 4, 5] and little["capacity_orig"] == 446
    assert little["opps"][0] == {"khz": 450000, "power_uw": 33000, "cluster_power_uw": 26000}
    assert little["idle_states"][0] == {"name": "WFI", "level": "cpu", "exit_latency_ns": 1000,
                                        "target_residency_ns": 1000, "power_uw": 6000,
                                        "cluster_power_uw": 56000}


def test_platform_is_immutable():
    p = load_platform("mt8173")
    with pytest.raises(AttributeError):
        p.name = "x"  # type: ignore[misc]
    q = copy.deepcopy(p)
    assert q == p


def test_result_labels_the_idle_power_source():
    from hetsched import Simulation
    for name, label in (("gs101", "estimated"), ("sm8150", "published"), ("juno-r0", "published")):
        res = json.loads(Simulation(name, "periodic", lower_bound=False).run(0.01).to_json())
        assert res["idle_power_model"] == label, name
        assert any("idle power" in n for n in res["platform_notes"]) or name == "juno-r0"


def test_a_user_file_gets_its_own_legacy_idle_costs_but_no_estimate(tmp_path):
    # the raw idle-cost-data a file keeps is published data: a copy of rk3399 maps it the
    # same way; a copy of gs101 (no idle data at all) stays at 0, labelled "none"
    mine = load_platform(write(tmp_path, raw("rk3399"), "mine.json"))
    assert mine.idle_power_model == "published"
    assert [c.idle_states for c in mine.clusters] == [c.idle_states for c in load_platform("rk3399").clusters]
    # rk3399 little: cpu <4 4 0 0>, cluster <7 7 6 0> -> WFI (4000, 7000), cpu-sleep (0, 6000)
    assert [(s.power_uw, s.cluster_power_uw) for s in mine.clusters[0].idle_states] == [
        (4000, 7000), (0, 6000), (0, 0)]
    doc = raw("rk3399")
    del doc["clusters"][0]["em_table_meta"]["idle_cost_cpu"]
    part = load_platform(write(tmp_path, doc, "part.json"))
    assert part.idle_power_model == "none"
    assert "cluster little: idle power not published: counted as 0" in part.notes


def test_measured_wakeups_are_laid_over_the_builtin_files():
    """measured/idle_wakeups.json: a Pixel 6a took 224 µs (median) to run a task woken onto a
    mid CPU in c2, whose DT latency (entry + exit, 150 + 190 µs) cpuidle keeps for the
    governor; the file itself stays a copy of shared/platforms, and a user's copy of it
    gets no measurement it does not state."""
    mid = {c.name: c for c in load_platform("gs101").clusters}["mid"]
    wfi, c2 = mid.idle_states
    assert (c2.exit_latency_ns, c2.measured_wakeup_ns) == (340_000, 224_000)
    assert (wfi.exit_latency_ns, wfi.measured_wakeup_ns) == (1000, 17_000)
    assert "measured_wakeup_us" not in json.dumps(raw("gs101"))
    sm = {c.name: c for c in load_platform("sm8150").clusters}
    assert [s.measured_wakeup_ns for s in sm["prime"].idle_states] == [26_000, 329_000, None]
    assert all(s.measured_wakeup_ns is None for c in load_platform("juno-r0").clusters for s in c.idle_states)
    user = load_platform(str(DATA_DIR / "gs101.json"))
    assert all(s.measured_wakeup_ns is None for c in user.clusters for s in c.idle_states)


def test_device_init_is_applied_under_its_kernel_only(tmp_path):
    # a user board whose phone wrote sched_upmigrate 90 at boot under msm-4.14
    from hetsched.sim import Simulation

    doc = minimal()
    doc["device_init"] = {"kernel": "msm-4.14", "source": "the board's init.rc",
                          "knobs": {"vendor.sched_upmigrate": 90, "schedutil.pl": 1}}
    path = write(tmp_path, doc)
    p = load_platform(path)
    assert p.device_init.knobs == (("vendor.sched_upmigrate", 90.0), ("schedutil.pl", 1.0))

    def knob(kernel, **extra):
        sim = Simulation(platform=path, workload="periodic", scheduler="eas", governor="schedutil",
                         lower_bound=False, knobs={"kernel": kernel, **extra})
        return sim.knob_values()["vendor.sched_upmigrate"]

    assert knob("msm-4.14") == 90
    assert knob("mainline-6.12") == 95          # another kernel: the knob's default
    assert knob("msm-4.14", **{"vendor.sched_upmigrate": 80}) == 80  # the user's knob last


@pytest.mark.parametrize("device_init, field", [
    ([1, 2], "device_init"),
    ({"kernel": "linux-2.6", "source": "x", "knobs": {}}, "device_init.kernel"),
    ({"kernel": "msm-4.14", "knobs": {}}, "device_init.source"),
    ({"kernel": "msm-4.14", "source": "x", "knobs": {"sched_upmigrat": 1}}, "device_init.knobs.sched_upmigrat"),
    ({"kernel": "msm-4.14", "source": "x", "knobs": {"schedutil.pl": "on"}}, "device_init.knobs.schedutil.pl"),
])
def test_bad_device_init_is_one_line_naming_the_field(tmp_path, device_init, field):
    doc = minimal()
    doc["device_init"] = device_init
    with pytest.raises(InputError) as ei:
        load_platform(write(tmp_path, doc))
    assert ei.value.field == field and "\n" not in str(ei.value)
