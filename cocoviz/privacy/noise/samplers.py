"""The noise laws (double-geometric; discrete Gaussian), their three samplers, and keyed noise streams.

Under pure ε-DP each sampler's ``draw(values, scale, key)`` adds the double-geometric
noise below; under ρ-zCDP its ``draw_gaussian(values, sigma2, key)`` adds the discrete
Gaussian N_ℤ(0, σ²), ``P(X = x) ∝ exp(-x²/(2σ²))`` (Canonne, Kamath and Steinke 2020),
by the same three routes (fast: keyed Philox; secure: exact, over AES-CTR,
:mod:`cocoviz.privacy.noise._discrete_gaussian`; opendp: OpenDP's ``make_gaussian``).

Every noisy answer of the engine is ``value + X`` with X double-geometric of
scale Δ/ε: ``P(X = k) = (1-α)/(1+α) α^|k|``, ``α = exp(-ε/Δ)`` (METHOD.md).
Three samplers draw it (:data:`SAMPLERS`), all exact on the integers (never
rounded floating-point Laplace):

* ``"fast"``, :class:`FastSampler` — Philox counter streams, seeded; fast, for exploration, teaching
  and experiments.  **Not for release**: a seeded pseudo-random generator is
  predictable.  Its noise is *keyed*: cell ``j`` of the measurement
  ``key = (level, node, query)`` draws from the counter ``(j, node, level, query)``,
  so a seeded result never depends on threads, node order, caches or machines.
* ``"secure"``, :class:`SecureSampler` — for releases: Canonne, Kamath and Steinke's
  exact discrete Laplace in integer arithmetic, compiled and vectorised over whole
  arrays (:mod:`cocoviz.privacy.noise._discrete_laplace`), from AES-128 in counter mode (randomgen's
  ``AESCounter``) keyed from the operating system's entropy each time a sampler is
  made.  It has no seed.
* ``"opendp"``, :class:`OpenDPSampler` — the same law from OpenDP's discrete Laplace over
  the OS CSPRNG; slower (one Python list per call), kept as the reference the secure
  sampler is tested against, and selectable.

>>> sampler = FastSampler(seed=0)
>>> a = sampler.draw(np.array([5, 7]), scale=1.0, key=(0, 0, 0))
>>> b = sampler.draw(np.array([5, 7]), scale=1.0, key=(0, 0, 0))
>>> bool((a == b).all())  # the same key gives the same noise, whatever ran before
True
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from cocoviz.errors import BudgetError, ParameterError, PrivacyError

__all__ = [
    "EPSILON_RANGE",
    "FastSampler",
    "SecureSampler",
    "OpenDPSampler",
    "Sampler",
    "SAMPLERS",
    "GaussianNoise",
    "make_sampler",
    "check_epsilon",
    "check_seed",
    "double_geometric_pmf",
    "discrete_gaussian_pmf",
    "discrete_gaussian_variance",
]

#: The ε a single measurement may spend.  Below 1e-6 the noise (scale up to
#: 2e6) would still be exact, but such a budget protects nothing useful and is
#: almost surely a typing slip; above 1e6 the noise is exactly zero in double
#: precision (α = exp(-1e6) = 0), so the release would publish the truth.
EPSILON_RANGE = (1e-6, 1e6)

# The fast sampler's noise is exact while it stays below 2**52 in magnitude
# (float64 integers); refuse rather than ever return an overflowed value.
_EXACT_NOISE = 2.0**52


def check_epsilon(epsilon: float, what: str = "ε") -> float:
    """``epsilon`` as a float, refusing anything but a real number in :data:`EPSILON_RANGE`.

    >>> check_epsilon(0.5)
    0.5
    >>> check_epsilon(True)
    Traceback (most recent call last):
    ...
    cocoviz.errors.BudgetError: ε must be a real number, got True
    """
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise BudgetError(f"{what} must be a real number, got {epsilon!r}")
    try:
        value = float(epsilon)
    except OverflowError:  # an int beyond float's range: out of range, like inf
        value = math.inf
    lo, hi = EPSILON_RANGE
    if not (math.isfinite(value) and lo <= value <= hi):
        raise BudgetError(
            f"{what} must be between {lo:g} and {hi:g}, got {epsilon!r}" + (" (ε must be > 0)" if not value > 0 else "")
        )
    return value


def check_seed(seed: int | Sequence[int] | None) -> tuple[int, ...]:
    """The entropy of a seed: a whole number >= 0 or a sequence of them; None draws fresh entropy.

    >>> check_seed(3), check_seed((3, 1))
    ((3,), (3, 1))
    """
    if seed is None:
        return (int(np.random.SeedSequence().entropy),)
    parts = seed if isinstance(seed, (tuple, list)) else (seed,)
    for part in parts:
        if isinstance(part, bool) or not isinstance(part, numbers.Integral) or part < 0:
            raise ParameterError(f"seed must be a whole number >= 0 (or a sequence of them), got {seed!r}")
    if not parts:
        raise ParameterError("seed must not be an empty sequence")
    return tuple(int(p) for p in parts)


@dataclass(frozen=True)
class GaussianNoise:
    """The discrete Gaussian N_ℤ(0, σ²) as a sampler's ``scale``: ``draw(values, GaussianNoise(σ²), key)``
    adds it where a float scale adds double-geometric noise (so a plan's noise is one value per level).

    >>> FastSampler(seed=0).draw(np.zeros(3, np.int64), GaussianNoise(4.0), (0, 0, 0)).shape
    (3,)
    """

    sigma2: numbers.Real


def _split(scale: float | GaussianNoise) -> tuple[float, float | None]:
    """(Laplace scale, None) or (0, σ² as a float) for the fast kernels."""
    if isinstance(scale, GaussianNoise):
        return 0.0, float(_check_sigma2(scale.sigma2))
    return scale, None


def _check_sigma2(sigma2: numbers.Real) -> numbers.Real:
    """σ², refused unless a positive finite real; kept as given (the secure sampler takes a rational exactly)."""
    if isinstance(sigma2, bool) or not isinstance(sigma2, numbers.Real) or not (0 < float(sigma2) < math.inf):
        raise ParameterError(f"σ² must be a positive finite number, got {sigma2!r}")
    return sigma2


def double_geometric_pmf(k: np.ndarray, scale: float) -> np.ndarray:
    """P(X = k) = (1-α)/(1+α) α^|k| with α = exp(-1/scale)."""
    alpha = math.exp(-1.0 / scale)
    return (1 - alpha) / (1 + alpha) * alpha ** np.abs(np.asarray(k, np.float64))


def discrete_gaussian_pmf(k: np.ndarray, sigma2: float) -> np.ndarray:
    """P(X = k) of the discrete Gaussian (float; the normaliser summed over ±(40σ + 10))."""
    span = int(40 * math.sqrt(sigma2)) + 10
    norm = np.exp(-(np.arange(-span, span + 1, dtype=np.float64) ** 2) / (2 * sigma2)).sum()
    return np.exp(-(np.asarray(k, np.float64) ** 2) / (2 * sigma2)) / norm


def discrete_gaussian_variance(sigma2: float) -> float:
    """Var X of the discrete Gaussian: below σ², close to it for σ >= 1 (exact sum, for the merge weights).

    >>> round(discrete_gaussian_variance(0.25), 3), round(discrete_gaussian_variance(4.0), 6)
    (0.215, 4.0)
    """
    span = int(40 * math.sqrt(sigma2)) + 10
    k = np.arange(-span, span + 1, dtype=np.float64)
    return float((k * k * discrete_gaussian_pmf(k, sigma2)).sum())


class FastSampler:
    """Double-geometric noise from keyed counter-based streams (exploration only, not for release).

    Cell ``j`` of the measurement ``key = (level, node, query)`` takes its noise from
    Philox4x32-10 at counter ``(j, node, level, query)`` under a key derived from the
    seed (:mod:`cocoviz.privacy.noise._fast_kernels`): ``X = floor(E1 · scale) - floor(E2 · scale)``
    with ``E1, E2`` standard exponential, each floor geometric with ``P(≥ k) = α^k``.
    A cell's noise depends on nothing else, so a whole level drawn at once
    (:meth:`draw_level`) equals its nodes drawn one by one, on any number of threads.
    """

    secure = False

    def __init__(self, seed: int | Sequence[int] | None = None):
        self.entropy = check_seed(seed)
        self.name = (
            "fast: Philox counter streams, seeded, keyed by (level, node, query) (exploration only, not for release)"
        )
        self._key = tuple(np.uint64(w) for w in np.random.SeedSequence(self.entropy).generate_state(2, np.uint32))

    def draw(self, values: np.ndarray, scale: float | GaussianNoise, key: Sequence[int]) -> np.ndarray:
        """``values`` plus double-geometric noise of ``scale`` (or the discrete Gaussian of a
        :class:`GaussianNoise`), from the stream of ``key``.

        ``key`` is ``(level, node, query)``; any other tuple of whole numbers names a
        stream of its own (derived from the seed and the tuple, a little slower).
        """
        values = np.asarray(values, np.int64)
        if len(key) == 3 and all(0 <= int(k) < 2**32 for k in key) and int(key[2]) < 256:
            level, node, query = (int(k) for k in key)
            return self.draw_level(values.ravel(), np.array([0, values.size]), scale, level, query, node).reshape(
                values.shape
            )
        words = np.random.SeedSequence(self.entropy, spawn_key=tuple(int(k) for k in key)).generate_state(2, np.uint32)
        scale, sigma2 = _split(scale)
        flat = values.ravel()
        return _draw(flat, np.array([0, values.size]), scale, 0, 255, 0, 0, *words, sigma2=sigma2).reshape(values.shape)

    def draw_gaussian(self, values: np.ndarray, sigma2: float, key: Sequence[int]) -> np.ndarray:
        """``values`` plus discrete Gaussian noise of variance parameter ``sigma2``, from the stream of ``key``.

        A cell's word inverts a table of P(|X| <= m) (:func:`gaussian_cdf_table`,
        :func:`cocoviz.privacy.noise._fast_kernels.add_gaussian_table_noise`), or, for σ beyond about
        400,000, runs Canonne, Kamath and Steinke's rejection on counters of its own
        (:func:`cocoviz.privacy.noise._fast_kernels.add_gaussian_noise`); either way, as for the Laplace,
        a cell's noise depends only on (seed, key, cell): the law to the words' 53-bit resolution.
        """
        return self.draw(values, GaussianNoise(_check_sigma2(sigma2)), key)

    def draw_level(
        self,
        values: np.ndarray,
        ptr: np.ndarray,
        scale: float,
        level: int,
        query: int = 0,
        first_node: int = 0,
        offset: int = 0,
        out: np.ndarray | None = None,
    ) -> np.ndarray:
        """Noisy ``values`` of consecutive nodes: segment ``s`` (``values[ptr[s]:ptr[s+1]]``) is node
        ``first_node + s``, keyed ``(level, first_node + s, query)``; the first segment starts at that
        node's cell ``offset`` (a node drawn in chunks).  ``out`` may be ``values`` itself.  A
        :class:`GaussianNoise` ``scale`` draws the discrete Gaussian."""
        scale, sigma2 = _split(scale)
        return _draw(values, ptr, scale, level, query, first_node, offset, *self._key, out=out, sigma2=sigma2)


#: The fast discrete Gaussian inverts a table of P(|X| <= m) for m up to 10σ (P(|X| > 10σ) < 2**-72, below
#: the words' resolution) while it has at most this many entries; beyond, it runs the rejection sampler.
_TABLE_ENTRIES = 1 << 22


def gaussian_cdf_table(sigma2: float) -> np.ndarray:
    """``P(|X| <= m)`` of the discrete Gaussian for m = 0 .. ⌈10σ⌉ + 2, its last entry 2 (above every u).

    >>> gaussian_cdf_table(1.0)[:3].round(4).tolist()
    [0.3989, 0.8829, 0.9909]
    """
    span = math.ceil(10 * math.sqrt(sigma2)) + 2
    k = np.arange(span + 1, dtype=np.float64)
    weights = np.exp(-(k * k) / (2 * sigma2))
    weights[1:] *= 2  # ±m
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    cdf[-1] = 2.0
    return cdf


def _draw(values, ptr, scale, level, query, first_node, offset, k0, k1, out=None, sigma2=None) -> np.ndarray:
    """The compiled keyed draw: double-geometric noise of ``scale``, or discrete Gaussian of ``sigma2`` if given."""
    laplace_scale = scale if sigma2 is None else math.sqrt(sigma2) + 1  # the Gaussian rejects from scale ⌊σ⌋ + 1
    if 37.0 * laplace_scale >= _EXACT_NOISE:
        raise BudgetError(f"noise of scale {laplace_scale:g} is too large to add exactly")
    from cocoviz.privacy.noise import _fast_kernels  # deferred: numba's import is heavy

    values = np.ascontiguousarray(values, np.int64)
    ptr = np.ascontiguousarray(ptr, np.int64)
    out = np.empty_like(values) if out is None else out
    if sigma2 is None:
        kernel, law = _fast_kernels.add_noise, float(scale)
    elif 10 * math.sqrt(sigma2) + 3 <= _TABLE_ENTRIES:
        kernel, law = _fast_kernels.add_gaussian_table_noise, gaussian_cdf_table(sigma2)
    else:
        kernel, law = _fast_kernels.add_gaussian_noise, float(sigma2)
    kernel(
        values, ptr, int(first_node), int(offset), int(level), int(query), np.uint64(k0), np.uint64(k1),
        law, 0, values.size, out,
    )  # fmt: skip
    return out


class SecureSampler:
    """Exact double-geometric noise for releases: vectorised integer sampling over AES-CTR keyed by the OS.

    The discrete Laplace of scale Δ/ε (ε a float taken at its exact value) by Canonne,
    Kamath and Steinke's algorithm in integer arithmetic, compiled over whole arrays;
    :mod:`cocoviz.privacy.noise._discrete_laplace` proves each step exact.  Its random words come from
    randomgen's ``AESCounter`` (AES-128 in counter mode, AES-NI when the CPU has it),
    keyed with 128 bits of ``os.urandom`` when the sampler is made: never seeded, so keys
    are ignored.  Memory beyond the output is one 1 MiB buffer of random words.
    """

    secure = True
    kind = "secure"
    name = (
        "secure: exact discrete Laplace or Gaussian (Canonne-Kamath-Steinke, integer arithmetic) "
        "over AES-CTR keyed by the OS"
    )

    def __init__(self) -> None:
        import os

        from randomgen import AESCounter  # deferred, with numba: only a secure release needs them

        from cocoviz.privacy.noise import _discrete_gaussian, _discrete_laplace

        self._add_noise = _discrete_laplace.add_noise
        self._add_gaussian = _discrete_gaussian.add_noise
        self._bitgen = AESCounter(key=int.from_bytes(os.urandom(16), "little"))

    def draw(self, values: np.ndarray, scale: float, key: Sequence[int] = ()) -> np.ndarray:
        """``values`` (whole numbers, as int64) plus exact discrete Laplace noise of ``scale`` (or the discrete
        Gaussian of a :class:`GaussianNoise`); ``key`` is ignored."""
        if isinstance(scale, GaussianNoise):
            return self.draw_gaussian(values, scale.sigma2)
        return self._add_noise(values, scale, self._bitgen)

    def draw_gaussian(self, values: np.ndarray, sigma2: float, key: Sequence[int] = ()) -> np.ndarray:
        """``values`` plus exact discrete Gaussian noise of variance parameter ``sigma2`` (taken at its exact
        value; :mod:`cocoviz.privacy.noise._discrete_gaussian`); ``key`` is ignored."""
        return self._add_gaussian(values, _check_sigma2(sigma2), self._bitgen)

    def __getstate__(self):
        # A copy would carry the key and counter: two processes would draw the same noise.
        raise PrivacyError("a secure sampler is never copied or shipped: open one where it draws (make_sampler)")


class OpenDPSampler:
    """Exact double-geometric noise from OpenDP (the reference for :class:`SecureSampler`).

    OpenDP's ``make_laplace`` on an integer vector domain samples the discrete
    Laplace distribution exactly (Canonne, Kamath and Steinke's sampler over
    the OS CSPRNG); with scale Δ/ε it is the geometric mechanism.  Keys are
    ignored: there is no seed to key.
    """

    secure = True
    kind = "opendp"
    name = "opendp: OpenDP discrete Laplace or Gaussian (exact, OS CSPRNG)"

    def __init__(self) -> None:
        import opendp.prelude as dp  # deferred: only a release with this sampler needs it

        dp.enable_features("contrib")
        self._dp = dp
        self._cache: dict[object, object] = {}

    def draw(self, values: np.ndarray, scale: float, key: Sequence[int] = ()) -> np.ndarray:
        if isinstance(scale, GaussianNoise):
            return self.draw_gaussian(values, scale.sigma2)
        values = np.asarray(values, np.int64)
        if values.size == 0:
            return values.copy()
        measurement = self._cache.get(scale)
        if measurement is None:
            dp = self._dp
            measurement = dp.m.make_laplace(
                dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=float(scale)
            )
            self._cache[scale] = measurement
        return np.asarray(measurement(values.ravel().tolist()), np.int64).reshape(values.shape)

    def draw_gaussian(self, values: np.ndarray, sigma2: float, key: Sequence[int] = ()) -> np.ndarray:
        """``values`` plus OpenDP's discrete Gaussian (``make_gaussian`` on integers) of scale σ = √σ² (as a float)."""
        values = np.asarray(values, np.int64)
        sigma = math.sqrt(float(_check_sigma2(sigma2)))
        if values.size == 0:
            return values.copy()
        measurement = self._cache.get(("gaussian", sigma))
        if measurement is None:
            dp = self._dp
            measurement = dp.m.make_gaussian(
                dp.vector_domain(dp.atom_domain(T="i64")), dp.l2_distance(T="i64"), scale=sigma
            )
            self._cache[("gaussian", sigma)] = measurement
        return np.asarray(measurement(values.ravel().tolist()), np.int64).reshape(values.shape)


#: Sampler names: ``"fast"`` (seeded, exploration), ``"secure"`` (release) and ``"opendp"`` (release, the reference).
SAMPLERS = ("fast", "secure", "opendp")

#: Any of the three samplers (all have ``secure``, ``name`` and ``draw(values, scale, key)``).
Sampler = FastSampler | SecureSampler | OpenDPSampler


def make_sampler(name: str, seed: int | Sequence[int] | None = None) -> Sampler:
    """The sampler called ``name``; ``seed`` keys the fast sampler and is ignored by the secure ones."""
    if name == "fast":
        return FastSampler(seed)
    if name == "secure":
        return SecureSampler()
    if name == "opendp":
        return OpenDPSampler()
    raise ParameterError(f"sampler must be one of {SAMPLERS}, got {name!r}")
