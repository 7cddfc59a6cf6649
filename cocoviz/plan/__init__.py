"""The public plan of a release: :class:`Plan` (:mod:`cocoviz.plan.plan`), the registry of estimation
methods (:mod:`cocoviz.plan.methods`) and plan files in TOML or JSON (:mod:`cocoviz.plan.files`)."""

from cocoviz.merge_rules import MERGES
from cocoviz.plan.methods import CONSISTENCY, DEFAULT_MAX_SIZE, MAX_K, METHODS, Method, gaussian_epsilon
from cocoviz.plan.plan import Plan
from cocoviz.shape import Shape

__all__ = [
    "Method",
    "METHODS",
    "Shape",
    "Plan",
    "CONSISTENCY",
    "MERGES",
    "DEFAULT_MAX_SIZE",
    "MAX_K",
    "gaussian_epsilon",
]
