"""The public plan of a release: :class:`Plan` (:mod:`cocoviz.plan.plan`), the registry of estimation
methods (:mod:`cocoviz.methods.registry`) and plan files in TOML or JSON (:mod:`cocoviz.plan.files`)."""

from cocoviz.core.shape import Shape
from cocoviz.methods.registry import CONSISTENCY, DEFAULT_MAX_SIZE, MAX_K, MERGES, METHODS, Method, gaussian_epsilon
from cocoviz.plan.plan import Plan

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
