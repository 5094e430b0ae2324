"""The policy neural network of Learning EAS (Han & Lee 2020, Figs. 4-6): inputs, one hidden
layer of ReLU neurons, one output kept in ``[0, out_max]``, trained by backpropagation of
the error the algorithms compute (eq. 12, eq. 13).

Backpropagation convention (the paper does not spell it out): the error is the output
layer's delta, the way a "target - output" error is fed to a textbook network, so every
weight moves by ``lr * error * d(output)/d(weight)`` and a positive error raises the
output. The clamp of the output to ``[0, out_max]`` is passed straight through (its
gradient is taken as 1), so a network pinned at a bound can still be moved back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PolicyNetwork"]


@dataclass
class Forward:
    """What a forward pass leaves for the backward pass."""

    x: np.ndarray
    z: np.ndarray  # hidden pre-activation
    h: np.ndarray  # hidden ReLU output
    raw: float  # output before the clamp
    out: float  # output after the clamp


class PolicyNetwork:
    """``n_in`` inputs -> ``n_hidden`` ReLU -> 1 linear output clamped to ``[0, out_max]``.

    ``init_output``: the output the fresh network gives for inputs all equal to
    ``init_input`` (the paper only says "Initialize policy neural network"; we start near
    the threshold so that both actions are taken from the start). Weights are drawn from
    a seeded numpy generator: the same seed gives the same network.
    """

    def __init__(self, n_in: int, n_hidden: int, out_max: float, lr: float, seed: int = 0,
                 init_output: float | None = None, init_input: float = 1.0, init_spread: float = 0.5):
        if n_in < 1 or n_hidden < 1:
            raise ValueError("a policy network needs at least one input and one hidden neuron")
        self.n_in, self.n_hidden, self.out_max, self.lr = n_in, n_hidden, float(out_max), float(lr)
        rng = np.random.default_rng(seed)
        init_output = out_max / 2 if init_output is None else init_output
        # hidden neurons: each about the mean input, with a seeded spread
        self.w1 = rng.uniform(1 - init_spread, 1 + init_spread, (n_hidden, n_in)) / n_in
        self.b1 = np.zeros(n_hidden)
        # output: sums the hidden neurons to about init_output for inputs of init_input
        h0 = np.maximum(self.w1 @ np.full(n_in, float(init_input)), 0.0).sum()
        scale = init_output / h0 if h0 > 0 else 0.0
        self.w2 = rng.uniform(1 - init_spread, 1 + init_spread, n_hidden) * scale
        self.b2 = 0.0

    # -- running --------------------------------------------------------------------
    def forward(self, x) -> Forward:
        x = np.asarray(x, dtype=float)
        if x.shape != (self.n_in,):
            raise ValueError(f"expected {self.n_in} inputs, got shape {x.shape}")
        z = self.w1 @ x + self.b1
        h = np.maximum(z, 0.0)
        raw = float(self.w2 @ h + self.b2)
        return Forward(x=x, z=z, h=h, raw=raw, out=min(max(raw, 0.0), self.out_max))

    def __call__(self, x) -> float:
        return self.forward(x).out

    # -- training -------------------------------------------------------------------
    def backward(self, f: Forward, error: float) -> None:
        """One step of backpropagation of ``error`` (the output delta) through the pass
        ``f``: w2 += lr*e*h, b2 += lr*e, w1 += lr*outer(e*w2*relu'(z), x), b1 += lr*e*w2*relu'(z)."""
        e = float(error)
        if e == 0.0:
            return
        dh = e * self.w2 * (f.z > 0)  # uses w2 before its update
        self.w2 = self.w2 + self.lr * e * f.h
        self.b2 = self.b2 + self.lr * e
        self.w1 = self.w1 + self.lr * np.outer(dh, f.x)
        self.b1 = self.b1 + self.lr * dh

    # -- storage --------------------------------------------------------------------
    def state(self) -> dict:
        return {"n_in": self.n_in, "n_hidden": self.n_hidden, "out_max": self.out_max,
                "w1": self.w1.tolist(), "b1": self.b1.tolist(), "w2": self.w2.tolist(), "b2": self.b2}

    def load_state(self, st: dict) -> None:
        if st.get("n_in") != self.n_in or st.get("n_hidden") != self.n_hidden:
            raise ValueError(f"stored network is {st.get('n_in')}x{st.get('n_hidden')}, "
                             f"this one {self.n_in}x{self.n_hidden}")
        self.w1 = np.asarray(st["w1"], dtype=float).reshape(self.n_hidden, self.n_in)
        self.b1 = np.asarray(st["b1"], dtype=float).reshape(self.n_hidden)
        self.w2 = np.asarray(st["w2"], dtype=float).reshape(self.n_hidden)
        self.b2 = float(st["b2"])

    def weight_norm(self) -> float:
        return float(np.sqrt((self.w1 ** 2).sum() + (self.b1 ** 2).sum() + (self.w2 ** 2).sum() + self.b2 ** 2))
