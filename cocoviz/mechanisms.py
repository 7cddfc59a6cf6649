"""Kept for compatibility: the samplers live in :mod:`cocoviz.noise` (import them from there).

>>> from cocoviz.mechanisms import FastSampler
>>> FastSampler is __import__("cocoviz.noise", fromlist=["FastSampler"]).FastSampler
True
"""

from cocoviz.noise import (  # noqa: F401 - re-exported
    EPSILON_RANGE,
    SAMPLERS,
    FastSampler,
    OpenDPSampler,
    Sampler,
    SecureSampler,
    __all__,
    check_epsilon,
    check_seed,
    double_geometric_pmf,
    make_sampler,
)
