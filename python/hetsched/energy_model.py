"""The Energy Model API: the kernel's energy estimate and EAS's choice, for what-if
questions, computed by the engine's own code (crates/hetsched-core/src/energy_model.rs).

>>> from hetsched import EnergyModel
>>> em = EnergyModel.from_table([{"cpus": [0, 1], "opps": [(256, 100), (512, 300)]},
...                              {"cpus": [2, 3], "opps": [(512, 400), (768, 700), (1024, 1300)]}])
>>> em.compute_energy([100, 50, 300, 0])      # kernel units: cost x util, summed over pds
2550
>>> em.find_energy_efficient_cpu([0, 0, 0, 0], task_util=100, prev_cpu=3)
(0, {3: 700, 0: 300})

Units are the kernel's: `em_cpu_energy()` returns `cost * sum_util` with
`cost = 10 * power_uw / performance` (v6.12), so energies compare placements; they are not
joules. Utils are on the 0..1024 capacity scale. The model has no idle power, like the
kernel's.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Sequence

from hetsched.errors import InputError
from hetsched.platforms import Platform, load_platform

__all__ = ["EnergyModel"]


class EnergyModel:
    """Perf domains with their performance states, in the kernel's ``rd->pd`` order."""

    def __init__(self, native: Any, platform: str | None = None, kernel: str = "mainline-6.12"):
        """Wraps the engine's EnergyModel (:meth:`from_platform` and :meth:`from_table`
        build one); ``platform`` and ``kernel`` only name it."""
        self._em = native
        #: the platform's name, or None for a model given as a table
        self.platform = platform
        #: the kernel profile whose Energy Model this is
        self.kernel = kernel

    @classmethod
    def from_platform(cls, platform: str | Platform, kernel: str = "mainline-6.12") -> "EnergyModel":
        """The platform's Energy Model as a kernel profile builds it: ``mainline-6.12``
        (cost = 10 x power / performance, inefficient states skipped) or ``android-4.19``
        (cost = power x f_max / f, the 1.25 headroom inside the frequency mapping, feec's
        6% margin)."""
        from hetsched.sim import energy_model_of_platform

        p = platform if isinstance(platform, Platform) else load_platform(platform)
        native = energy_model_of_platform(p.to_spec())
        if kernel == "android-4.19":
            native.set_legacy()
        elif kernel != "mainline-6.12":
            raise InputError("EnergyModel.from_platform()", "kernel", "mainline-6.12 or android-4.19", got=kernel)
        return cls(native, platform=p.name, kernel=kernel)

    @classmethod
    def from_table(cls, domains: Iterable[Mapping]) -> "EnergyModel":
        """``[{"cpus": [0, 1], "opps": [(capacity, power_uw), ...]}, ...]``"""
        table = []
        for i, d in enumerate(domains):
            try:
                cpus = [int(c) for c in d["cpus"]]
                opps = [(int(c), int(p)) for c, p in d["opps"]]
            except (KeyError, TypeError, ValueError):
                raise InputError("EnergyModel.from_table()", f"domains[{i}]",
                                 '{"cpus": [int, ...], "opps": [(capacity, power), ...]}', got=d) from None
            table.append((cpus, opps))
        from hetsched.sim import energy_model_of_table

        try:
            return cls(energy_model_of_table(table))
        except InputError as e:
            # the engine names its document ("energy model"); the user called this method
            raise InputError("EnergyModel.from_table()", e.field, e.expected, got=e.got) from None

    @property
    def nr_cpus(self) -> int:
        """The number of CPUs the perf domains cover."""
        return self._em.nr_cpus

    def domains(self) -> list[dict]:
        """Each perf domain: cpus, capacity, and its states (khz, performance, power_uw,
        cost, inefficient)."""
        return [{"cpus": cpus, "capacity": cap,
                 "states": [dict(zip(("khz", "performance", "power_uw", "cost", "inefficient"), s)) for s in st]}
                for cpus, cap, st in self._em.domains()]

    def __repr__(self) -> str:
        doms = self._em.domains()
        nd, ns = len(doms), sum(len(st) for _, _, st in doms)
        return (f"EnergyModel(platform={self.platform!r}, kernel={self.kernel!r}, {nd} perf domain{'s' * (nd != 1)}, "
                f"{ns} performance state{'s' * (ns != 1)}, {self.nr_cpus} CPUs)")

    def _repr_html_(self) -> str:
        import html

        head = html.escape(f"Energy Model of {self.platform or 'a table'} ({self.kernel})")
        rows = []
        for d in self.domains():
            st = d["states"]
            rows.append("<tr>" + "".join(f"<td>{html.escape(str(x))}</td>" for x in (
                " ".join(map(str, d["cpus"])), d["capacity"], len(st),
                f"{st[0]['khz']}-{st[-1]['khz']}" if st else "",
                f"{st[0]['power_uw']}-{st[-1]['power_uw']}" if st else "",
                sum(1 for s in st if s["inefficient"]))) + "</tr>")
        cols = "".join(f"<th>{c}</th>" for c in ("cpus", "capacity", "states", "kHz", "power (uW)", "inefficient"))
        return f"<table><caption>{head}</caption><tr>{cols}</tr>{''.join(rows)}</table>"

    def _check(self, utils: Sequence[int], what: str) -> list[int]:
        if len(utils) != self.nr_cpus or any(not isinstance(u, int) or u < 0 for u in utils):
            raise InputError("EnergyModel", what, f"{self.nr_cpus} non-negative integer utils, one per CPU",
                             got=list(utils))
        return list(utils)

    def compute_energy(self, cpu_utils: Sequence[int], headroom: float = 1.25) -> int:
        """em_cpu_energy() summed over the perf domains: each at the lowest efficient state
        covering its max util x headroom, energy = cost x sum of its CPUs' utils."""
        return self._em.compute_energy(self._check(cpu_utils, "cpu_utils"), float(headroom))[0]

    def find_energy_efficient_cpu(self, cpu_utils: Sequence[int], task_util: int,
                                  prev_cpu: int, headroom: float = 1.25) -> tuple[int, dict[int, int]]:
        """EAS's choice (find_energy_efficient_cpu, v6.12) for a waking task of util
        ``task_util`` that last ran on ``prev_cpu``, the CPUs' utils *without* the task
        being ``cpu_utils``. Returns the CPU and, for every candidate the kernel evaluates
        (prev_cpu and the max-spare-capacity CPU of each perf domain, where the task
        fits), the system's energy with the task placed there."""
        utils = self._check(cpu_utils, "cpu_utils")
        if not isinstance(prev_cpu, int) or not 0 <= prev_cpu < self.nr_cpus:
            raise InputError("EnergyModel", "prev_cpu", f"a CPU number below {self.nr_cpus}", got=prev_cpu)
        if not isinstance(task_util, int) or not 0 <= task_util <= 1024:
            raise InputError("EnergyModel", "task_util", "an integer util in 0..1024", got=task_util)
        if not (isinstance(headroom, (int, float)) and 1.0 <= headroom <= 4.0):
            raise InputError("EnergyModel", "headroom", "a DVFS headroom in [1, 4] (the kernel's is 1.25)",
                             got=headroom)
        cpu, cands = self._em.find_energy_efficient_cpu(utils, task_util, prev_cpu, float(headroom))
        return cpu, dict(cands)
