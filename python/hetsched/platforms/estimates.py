"""ESTIMATES, not data: the assumptions used to make three built-in platforms runnable.

The files in ``data/`` hold only published numbers (data/SOURCES.md: "Nothing was
estimated or fitted").  Three SoCs lack an input of the Energy Model formula
``P = C * V^2 * f`` and have no published energy table:

* ``sm8150`` and ``sm8250``: no OPP voltages.  Qualcomm parts read them at run time from
  a per-chip fused hardware table (SOURCES.md caveat 2), so no DT carries them.
* ``g12b-s922x``: no ``dynamic-power-coefficient`` in mainline.

The loader refuses to invent power for any file (user files get an ``InputError``).
Only for these built-in platforms does it apply the explicit assumptions below, and then
the platform's ``power_model`` is ``"estimated"`` and its ``notes`` say what was assumed.
Everything here is meant to be read, questioned and replaced by better data.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

__all__ = [
    "VoltageLine",
    "BorrowedDpc",
    "DerivedDpc",
    "Estimate",
    "ESTIMATES",
    "estimate_for",
    "SC7180_SILVER_LINE",
    "SC7180_GOLD_LINE",
]


@dataclass(frozen=True)
class VoltageLine:
    """Voltage as a function of frequency, for OPPs whose voltage is not published.

    Model: flat at ``uv_lo`` up to ``khz_lo``, then the straight line through
    ``(khz_lo, uv_lo)`` and ``(khz_hi, uv_hi)``, extended beyond ``khz_hi``.  The flat part
    mimics the voltage floor a DVFS table sits on at low frequencies (the SC7180 LUT has
    576 and 768 MHz both at 596 mV); the straight line is the simplest curve through the
    two measured end points; the extension is needed for clusters clocked above the
    reference part.  Integer µV, truncated, like every other number handed to the kernel
    formula.
    """

    khz_lo: int
    uv_lo: int
    khz_hi: int
    uv_hi: int
    #: where the anchor points come from (a built-in platform and cluster name)
    from_platform: str
    from_cluster: str
    basis: str

    def uv(self, khz: int) -> int:
        if khz <= self.khz_lo:
            return self.uv_lo
        return self.uv_lo + (self.uv_hi - self.uv_lo) * (khz - self.khz_lo) // (self.khz_hi - self.khz_lo)

    def describe(self) -> str:
        return (
            f"V(f) = {self.uv_lo / 1000:g} mV up to {self.khz_lo / 1000:g} MHz, then linear through "
            f"{self.uv_hi / 1000:g} mV at {self.khz_hi / 1000:g} MHz (extended above), from "
            f"{self.from_platform} cluster {self.from_cluster!r}; {self.basis}"
        )


@dataclass(frozen=True)
class BorrowedDpc:
    """A ``dynamic-power-coefficient`` taken from the same core on another SoC in ``data/``."""

    dpc: int
    from_platform: str
    from_cluster: str
    basis: str

    def describe(self) -> str:
        return (
            f"dynamic-power-coefficient {self.dpc} borrowed from {self.from_platform} "
            f"cluster {self.from_cluster!r}; {self.basis}"
        )


@dataclass(frozen=True)
class DerivedDpc:
    """A ``dynamic-power-coefficient`` derived from a part's power rating (the
    hetero-2cpu platforms, Fedorova et al.'s Xeons), not taken from any device tree."""

    dpc: int
    basis: str

    def describe(self) -> str:
        return f"dynamic-power-coefficient {self.dpc} derived: {self.basis}"


Estimate = Union[VoltageLine, BorrowedDpc, DerivedDpc]

# --- Voltage lines -----------------------------------------------------------------
# Reference: sc7180.json, the only Qualcomm part in the data with published per-OPP
# voltages (one device's OSM LUT, posted on LKML with measured power; SOURCES.md
# "Sources by SoC").  Its silver cores are Cortex-A55 derivatives and its gold cores
# Cortex-A76 derivatives, the same classes as the SM8150 clusters and (for silver) the
# SM8250 ones.  End points are its lowest and highest OPPs with a published voltage:
#   silver  576.0 MHz -> 596 mV   ...  1804.8 MHz -> 884 mV
#   gold    825.6 MHz -> 596 mV   ...  2400.0 MHz -> 956 mV
# Cross-check for the extension: the gold line gives ~1048 mV at 2802 MHz, where gs101
# publishes 1056.25 mV for its Cortex-X1 (gs101.json); the same order of magnitude.
# Known weaknesses: SC7180 is a different process (and one chip); SM8250 gold/prime are
# Cortex-A77 derivatives, for which the data set has no voltages at all, so the A76 line
# stands in for them.  Qualcomm dpc values are also scaled (SOURCES.md caveat 1), so the
# absolute µW of these platforms are unverified twice over; ratios are what to trust.

SC7180_SILVER_LINE = VoltageLine(
    khz_lo=576_000,
    uv_lo=596_000,
    khz_hi=1_804_800,
    uv_hi=884_000,
    from_platform="sc7180",
    from_cluster="little",
    basis="same core class (Cortex-A55); the only published Qualcomm OPP voltages in the data",
)

SC7180_GOLD_LINE = VoltageLine(
    khz_lo=825_600,
    uv_lo=596_000,
    khz_hi=2_400_000,
    uv_hi=956_000,
    from_platform="sc7180",
    from_cluster="big",
    basis="Cortex-A76 class (A77 has no voltage data here); the only published Qualcomm OPP voltages in the data",
)

# --- Borrowed coefficients ------------------------------------------------------------
# G12B (S922X) pairs Cortex-A53 with Cortex-A73.  mt8183.json is the only other SoC in the
# data with exactly that pair *and* both coefficients; its OPP voltages span a similar
# range (650-1050 mV vs 731-1022 mV on S922X).  HiKey960 (hikey960.json) has the same
# pair too, with 110/550, but its A73:A53 ratio (5.0) is far from MT8183's (2.5), and
# which one is closer for S922X is not known; MT8183 was chosen for the similar voltage
# range.  The test suite checks these values against mt8183.json.

MT8183_A53_DPC = BorrowedDpc(
    dpc=84,
    from_platform="mt8183",
    from_cluster="little",
    basis="same core (Cortex-A53); MT8183 is the only other A53+A73 SoC here with a similar voltage range",
)

MT8183_A73_DPC = BorrowedDpc(
    dpc=211,
    from_platform="mt8183",
    from_cluster="big",
    basis="same core (Cortex-A73); MT8183 is the only other A53+A73 SoC here with a similar voltage range",
)

# --- Fedorova et al.'s two Xeon processors (hetero-2cpu, hetero-2cpu-homogeneous) --------
# Fedorova et al. ran two 2.8 GHz Intel Xeon (Northwood family, 130 nm) processors, one
# slowed to 1.05 GHz by the Xeon's thermal clock modulation (3/8 duty cycle; the voltage
# is not lowered).  No power figure is given in the paper.  Assumption: ~60 W of dynamic
# power per processor busy at 2.8 GHz (the 2.8 GHz Xeon DP's thermal design power is
# about 74 W, recalled from Intel's datasheet, not checked against a stored source; the
# rest taken as leakage, which the DT formula does not model) at a core voltage of
# 1.525 V: dpc = 60e6 uW / (1.525^2 V^2 x 2800 MHz) = 9214.  Clock modulation keeps the
# voltage, so the DT formula at 1050 MHz gives 3/8 of it (22.5 W), which is what gating
# the clock 5/8 of the time does to dynamic power.  Idle power: idle_power.py (estimated).
XEON_2800_DPC = DerivedDpc(
    dpc=9214,
    basis="~60 W dynamic at 2.8 GHz and 1.525 V for a Northwood-family Xeon (TDP ~74 W, recalled, "
          "not verified), P = dpc*V^2*MHz; clock modulation keeps V, so P scales with the "
          "effective clock",
)

#: platform name -> cluster name -> estimate.  Only built-in platforms appear here.
ESTIMATES: dict[str, dict[str, Estimate]] = {
    "sm8150": {
        "silver": SC7180_SILVER_LINE,  # Kryo 485 Silver, Cortex-A55 derivative
        "gold": SC7180_GOLD_LINE,  # Kryo 485 Gold, Cortex-A76 derivative
        "prime": SC7180_GOLD_LINE,  # Kryo 485 Gold Prime, Cortex-A76 derivative
    },
    "sm8250": {
        "silver": SC7180_SILVER_LINE,  # Kryo 585 Silver, Cortex-A55 derivative
        "gold": SC7180_GOLD_LINE,  # Kryo 585 Gold, Cortex-A77 derivative (no A77 data)
        "prime": SC7180_GOLD_LINE,  # Kryo 585 Gold Prime, Cortex-A77 derivative
    },
    "g12b-s922x": {
        "little": MT8183_A53_DPC,
        "big": MT8183_A73_DPC,
    },
    # Fedorova et al.'s Xeons
    "hetero-2cpu": {"fast": XEON_2800_DPC, "slow": XEON_2800_DPC},
    "hetero-2cpu-homogeneous": {"cpu0": XEON_2800_DPC, "cpu1": XEON_2800_DPC},
}


def estimate_for(platform: str, cluster: str) -> Estimate | None:
    """The estimate for one cluster of a built-in platform, or None."""
    return ESTIMATES.get(platform, {}).get(cluster)
