"""The power consumption test of Learning EAS (Han & Lee 2020, §III.D): where the policy
networks start.

The paper: "Learning EAS sets d^pi and f_w to fixed values obtained by the power
consumption test"; "the learning results are periodically stored in the secondary
repository and restored to initial values of the synapses of the policy neural network at
the next system boot"; and Table 3 measures "Learning EAS without changing TARGET_LOAD and
sched_migration_cost" in three scenes, music play, the home screen idle and Train Sim, 3
minutes each (§IV.A). It does not say what the power consumption test runs. Our reading
(docs/learning.md, "The power consumption test"): the test is Table 3's three scenes, run
one after the other from a fresh network in the observing mode (``learning.apply=0``: the
agents run and train, TARGET_LOAD and sched_migration_cost keep the kernel's values), the
networks carried from scene to scene through the state file as across boots; what they
hold at the end is the platform's initial state, shipped as
``hetsched/learning/data/power-test-PLATFORM.json`` and restored by ``learning.initial=power-test``
(the default).

Each scene runs :data:`SCENE_S`, 5 simulated minutes, the time within which the paper's
learning rate lets a network settle after the workload pattern changes (§III.D, again in
§III.F); the file records, per scene and network, when the network's output at the
scene's mean input last moved by more than 1 % of its range (``settle_s``).

``scripts/learning_power_test.py`` writes the files (``--check`` compares).
"""

from __future__ import annotations

import copy
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Scene", "SCENES", "SCENE_S", "PLATFORMS", "KERNELS", "DATA_DIR", "data_path", "shipped_state",
           "metadata", "run", "state_bytes", "settle_time", "frozen_copy"]

DATA_DIR = Path(__file__).resolve().parent / "data"

#: the Learning EAS study's platforms (hetsched.reproduce.learning_eas: the G8's sm8150 and
#: Table 4's stand-ins) and gs101
PLATFORMS = ("gs101", "sm8150", "sc7180", "hikey960", "mt8183", "mt8173")
#: the kernel profile each platform's test runs under, the study's (the LG G8 ran Qualcomm's
#: msm-4.14, reproduce.learning_eas.G8_KERNEL); the others the default
KERNELS = {"sm8150": "msm-4.14"}

#: 5 simulated minutes a scene: "the learning rate ... is adjusted so that the policy neural
#: network stabilizes within 5 minutes when the workload pattern of the running tasks changes"
#: (§III.D); Table 3's own scenes ran 3 minutes each
SCENE_S = 300.0
#: a reading of the networks every this many seconds (benchmarks/learning/settle.py's)
READ_S = 10.0
#: a network has settled from the first reading after which every one stays within this
#: fraction of its output range of the last (settle.py's 1 %)
SETTLE_TOL = 0.01


@dataclass(frozen=True)
class Scene:
    name: str
    paper: str              # Table 3's scene
    workloads: tuple        # hetsched workloads run together
    seed: int               # workload seed (past the seeds runs use: the measured scenes are unseen)
    why: str


SCENES = (
    Scene("music-play", "Music Play", ("rtapp_mp3-short.json",), 9001,
          "rt-app's Android audio playback pipeline (AudioTick, AudioOut, AudioTrack, the mp3 decoder and OMX, "
          "endless), alone: the paper's scene is music with the screen off (31 mA, a quarter of the home "
          "screen's 116 mA); the only recorded background, android-system, is of an app launch with the screen "
          "on, busier than Home Idle itself, so none is added. Missing: the phone's own threads with the "
          "screen off"),
    Scene("home-idle", "Home Idle State", ("android-system",), 9002,
          "the phone's recorded system threads alone (system_server, SurfaceFlinger, HALs, System UI, kernel "
          "workers), the nearest built-in to a home screen left idle; they were recorded around an app launch, "
          "so they are busier than an idle home screen"),
    Scene("train-sim", "Train Sim", ("game:fps=60,level=3",), 9003,
          "the built-in game at Train Sim's high setting (60 fps, high resolution: Table 3 measured the high "
          "setting), beside the recorded system threads"),
)


def data_path(platform: str) -> Path:
    return DATA_DIR / f"power-test-{platform}.json"


def shipped_state(platform) -> tuple[Path | None, str]:
    """The shipped power test of ``platform`` (a :class:`~hetsched.platforms.model.Platform`
    or a built-in name): (its path, "") or (None, why there is none). Only a built-in
    platform has one: a user's platform file of the same name is another platform."""
    from hetsched.platforms import DATA_DIR as PLATFORM_DIR

    if isinstance(platform, str):
        name, builtin = platform, True
    else:
        name = platform.name
        builtin = bool(platform.path) and Path(platform.path).resolve().parent == PLATFORM_DIR.resolve()
    if not builtin:
        return None, f"platform {name} is not a built-in one, and only those have a power-test state"
    p = data_path(name)
    if not p.is_file():
        return None, f"no power-test state for platform {name} (hetsched/learning/data/{p.name})"
    return p, ""


def metadata(path: Path) -> dict:
    """The ``power_test`` section of a shipped file (what made it)."""
    try:
        return dict(json.loads(Path(path).read_text()).get("power_test") or {})
    except (OSError, ValueError, AttributeError):
        return {}


def frozen_copy(net):
    """A copy of ``net`` as it is now, read by its own forward pass (not the recording one
    the scene puts on the live network)."""
    c = copy.deepcopy(net)
    c.__dict__.pop("forward", None)
    return c


def settle_time(series: list[float], tol: float, dt: float) -> float:
    """Seconds from the first reading to the first from which every reading stays within
    ``tol`` of the last (0: within it from the start)."""
    last = series[-1]
    k = len(series) - 1
    while k > 0 and abs(series[k - 1] - last) <= tol:
        k -= 1
    return k * dt




def _scene(platform: str, kernel: str | None, scene: Scene, seconds: float, state: str, first: bool) -> dict:
    """One scene in the observing mode, restoring ``state`` (a fresh network the first
    time) and saving to it; returns the scene's readings."""
    from hetsched import Simulation

    # the first scene starts from a fresh network (the state file does not exist yet), the
    # others restore it: never from a shipped power test
    knobs: dict[str, Any] = {"learning.apply": 0, "learning.state": state, "learning.initial": "fresh"}
    if kernel:
        knobs["kernel"] = kernel
    sim = Simulation(platform=platform, workload=list(scene.workloads), scheduler="learning-eas", knobs=knobs,
                     seed=scene.seed, lower_bound=False)
    ctl = sim.learning
    if not first and not ctl.restored:
        raise RuntimeError(f"the power test's state {state} was not restored")
    nets = {f"target_load.{a.cluster}": a.net for a in ctl.tl_agents}
    if ctl.mc_agent is not None:
        nets["migration_cost"] = ctl.mc_agent.net
    # what each network is given in this scene (its mean is where it is read)
    seen: dict[str, list] = {k: [] for k in nets}
    for k, net in nets.items():
        def forward(x, k=k, f=net.forward):
            seen[k].append(list(map(float, x)))
            return f(x)
        net.forward = forward
    snaps = [{k: frozen_copy(n) for k, n in nets.items()}]
    step = round(READ_S * 1e9)
    end = sim.now_ns + round(seconds * 1e9)
    while sim.now_ns < end:
        sim.run_until(min(end, sim.now_ns + step))
        snaps.append({k: frozen_copy(n) for k, n in nets.items()})
    doc = sim.result().doc  # saves the state file
    for net in nets.values():
        del net.forward
    readings = {}
    for k, net in nets.items():
        if not seen[k]:
            continue
        x = np.mean(np.asarray(seen[k], dtype=float), axis=0)
        y = [s[k](x) for s in snaps]
        readings[k] = {"probe_input": [round(float(v), 6) for v in x], "output_start": y[0], "output_end": y[-1],
                       "moved": max(abs(v - y[0]) for v in y),
                       "settle_s": settle_time(y, SETTLE_TOL * net.out_max, READ_S)}
    return {"scene": scene.name, "paper": scene.paper, "workloads": list(scene.workloads), "seed": scene.seed,
            "seconds": seconds, "current_ma": float(doc["avg_power_mw"]) / 4.0,
            "steps": {"target_load": doc["learning"]["target_load_steps"],
                      "migration_cost": doc["learning"]["migration_cost_steps"]},
            "networks": readings}


def run(platform: str, kernel: str | None = None, scenes=SCENES, seconds: float = SCENE_S) -> dict:
    """The power consumption test of ``platform`` (under ``kernel``; None: :data:`KERNELS`'s):
    the state (the format ``learning.state`` loads) with a ``power_test`` section saying
    how it was made."""
    from hetsched.learning.agents import MigrationCostConfig, TargetLoadConfig
    from hetsched.sim import DEFAULT_KERNEL

    kernel = kernel if kernel is not None else KERNELS.get(platform)
    with tempfile.TemporaryDirectory(prefix="hetsched-power-test-") as td:
        state = str(Path(td) / "state.json")
        done = [_scene(platform, kernel, sc, seconds, state, i == 0) for i, sc in enumerate(scenes)]
        st = json.loads(Path(state).read_text())
    tl, mc = TargetLoadConfig(), MigrationCostConfig()
    st["power_test"] = {
        "what": "Learning EAS's power consumption test (Han & Lee 2020, §III.D; docs/learning.md): Table 3's "
                "scenes one after the other, from a fresh network, in the observing mode (learning.apply=0: "
                "the agents train, TARGET_LOAD and sched_migration_cost keep the kernel's values), the networks "
                "carried from scene to scene; made by scripts/learning_power_test.py",
        "kernel": kernel or DEFAULT_KERNEL,
        "tl_input": tl.input, "tl_lr": tl.lr, "mc_lr": mc.lr, "tl_seed": tl.seed, "mc_seed": mc.seed,
        "read_s": READ_S, "settle_tol": SETTLE_TOL,
        "scenes": done,
    }
    return st


def state_bytes(platform: str, **kw) -> bytes:
    """:func:`run` as the shipped file's bytes (the same run, the same bytes)."""
    return (json.dumps(run(platform, **kw), indent=1) + "\n").encode()
