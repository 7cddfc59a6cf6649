"""Kept for compatibility: the samplers live in :mod:`cocoviz.noise` (import them from there).

>>> from cocoviz.mechanisms import FastSampler
>>> FastSampler is __import__("cocoviz.noise", fromlist=["FastSampler"]).FastSampler
True
"""

from cocoviz.noise import *  # noqa: F403 - re-exported
from cocoviz.noise import __all__  # noqa: F401
