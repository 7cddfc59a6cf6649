"""Noise: the samplers and their laws, in one place.

* :mod:`cocoviz.privacy.noise.samplers` — the laws (double-geometric, discrete Gaussian) and the three
  samplers (``"fast"``, ``"secure"``, ``"opendp"``), each drawing either; the ε range and the seed check;
* ``_discrete_laplace``, ``_discrete_laplace_kernel``, ``_exact_exp`` — the secure sampler's
  exact discrete Laplace (its proof and driver, its compiled loop, its exact integer path);
* ``_discrete_gaussian`` — the secure sampler's exact discrete Gaussian (rejection from the
  discrete Laplace, its proof);
* ``_fast_kernels`` — the fast sampler's keyed Philox streams (compiled).
"""

from cocoviz.privacy.noise import samplers
from cocoviz.privacy.noise.samplers import *  # noqa: F403 - the public names, listed once in samplers.__all__

__all__ = list(samplers.__all__)
