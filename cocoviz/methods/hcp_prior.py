"""The prior of a plan's Hcp levels: validated public numbers, part of the plan's public dict.

A :class:`Prior` is what :meth:`cocoviz.Plan.build` makes of its ``prior=`` argument:

* ``"uniform"`` (the default, also None): every size of a bucket alike;
* ``"parent"``: a node's prior is its parent's **released** histogram (the root's is uniform);
  fitted level by level after the parent level is consistent (:mod:`cocoviz.release.post_process`);
* a numeric array over sizes 0..K (one prior for every node), or a public counts table, a
  DataFrame with exactly the columns ``size`` and ``count`` (a published table, a survey);
* a mapping ``{node path: array or table}``: one prior per node (nodes left out: uniform), e.g.
  :func:`cocoviz.datasets.previous.previous_census_prior`.

Arrays go through :mod:`cocoviz.methods.priors`' guard: a :class:`~cocoviz.hierarchy.Hierarchy` or any
object other than plain numbers is refused with :class:`~cocoviz.errors.PrivacyError` (a prior
taken from the protected data would break the claim); passing numbers asserts they are public.
Sizes above K count at K.  Priors are stored sparse and normalised, (size, weight) pairs, so a
plan's dict stays small and round-trips exactly.  A prior is post-processing: it adds no ε.

>>> prior = Prior.of(np.array([0, 2, 1, 1]), max_size=3)
>>> prior.to_dict()
{'kind': 'table', 'sizes': [1, 2, 3], 'weights': [0.5, 0.25, 0.25]}
>>> Prior.of(pd.DataFrame({"size": [1, 9], "count": [3, 1]}), max_size=3).table   # sizes past K count at K
((1, 3), (0.75, 0.25))
>>> Prior.from_dict(prior.to_dict()) == prior, Prior.of("parent").key()
(True, ('parent',))
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from cocoviz.errors import ParameterError, PrivacyError
from cocoviz.methods.priors import as_prior, is_real_number

__all__ = ["Prior", "PRIOR_NAMES", "UNIFORM"]

#: The named priors.
PRIOR_NAMES = ("uniform", "parent")

Sparse = tuple[tuple[int, ...], tuple[float, ...]]


def _sparse(value: object, max_size: int) -> Sparse:
    """Sizes and normalised weights of one public prior (array or ``size``/``count`` table)."""
    if isinstance(value, pd.DataFrame):
        if set(value.columns) != {"size", "count"}:
            raise PrivacyError(
                "a prior table must be a public counts table with exactly the columns 'size' and 'count', "
                f"got {list(value.columns)}"
            )
        sizes, counts = value["size"].to_numpy(), value["count"].to_numpy()
        if sizes.dtype.kind not in "iu" or (sizes < 0).any():
            raise ParameterError("a prior table's sizes must be whole numbers ≥ 0")
        if counts.dtype.kind == "b" or (counts.dtype.kind == "O" and not all(map(is_real_number, counts))):
            # True/False would count as 1/0: a column of flags is not a table of counts.
            raise ParameterError("a prior table's counts must be numbers ≥ 0, not true/false")
        sizes = np.minimum(sizes, max_size)
        dense = np.zeros(int(sizes.max(initial=0)) + 1)
        np.add.at(dense, sizes, as_prior(np.asarray(counts, np.float64)) if len(counts) else [])
        value = dense
    if isinstance(value, Mapping):
        beyond = [k for k in value if isinstance(k, numbers.Integral) and not isinstance(k, bool) and k > max_size]
        if beyond:
            # Refused before the dense array over 0..max(size) is made.
            raise ParameterError(f"a prior covers sizes 0..K = {max_size:,}: got size {max(beyond):,}")
    p = as_prior(value)
    if p.size > max_size + 1:
        raise ParameterError(f"a prior array covers sizes 0..K = {max_size}: got {p.size} entries")
    nz = np.flatnonzero(p)
    return tuple(int(s) for s in nz), tuple(float(w) for w in p[nz])


@dataclass(frozen=True)
class Prior:
    """A validated public prior: ``kind`` is ``"uniform"``, ``"parent"``, ``"table"`` or ``"nodes"``.

    ``table`` holds one sparse prior (sizes, weights) for every node; ``nodes`` one per node path.
    """

    kind: str = "uniform"
    table: Sparse = ((), ())
    nodes: tuple[tuple[tuple[str, ...], Sparse], ...] = ()

    @classmethod
    def of(cls, value: object = None, max_size: int = 100_000, paths=None) -> Prior:
        """Validate ``value`` (module docstring); ``paths`` (the hierarchy's nodes) checks a per-node mapping."""
        if isinstance(value, Prior):
            return value
        if value is None or isinstance(value, str):
            name = "uniform" if value is None else value
            if name not in PRIOR_NAMES:
                raise ParameterError(f"a named prior must be one of {PRIOR_NAMES}, got {value!r}")
            return cls(name)
        if isinstance(value, Mapping) and value and all(isinstance(k, tuple) for k in value):
            known = None if paths is None else set(paths)
            nodes = []
            for path, one in value.items():
                path = tuple(str(x) for x in path)
                if known is not None and path not in known:
                    raise ParameterError(f"the prior names node {path}, which is not in this hierarchy")
                nodes.append((path, _sparse(one, max_size)))
            return cls("nodes", nodes=tuple(sorted(nodes)))
        return cls("table", table=_sparse(value, max_size))

    def for_node(self, path: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray] | None:
        """The node's prior as (sizes, weights); None for uniform and for ``"parent"`` (see postprocess)."""
        if self.kind == "table":
            sparse = self.table
        elif self.kind == "nodes":
            sparse = dict(self.nodes).get(tuple(path))
            if sparse is None:
                return None
        else:
            return None
        return np.asarray(sparse[0], np.int64), np.asarray(sparse[1], np.float64)

    def key(self) -> tuple:
        """A hashable key (for the per-level memo of :func:`cocoviz.estimate`)."""
        return (self.kind,) if self.kind in PRIOR_NAMES else (self.kind, self.table, self.nodes)

    def to_dict(self) -> dict:
        """JSON-ready (lists); :meth:`from_dict` gives back an equal prior."""
        if self.kind == "table":
            return {"kind": "table", "sizes": list(self.table[0]), "weights": list(self.table[1])}
        if self.kind == "nodes":
            return {
                "kind": "nodes",
                "nodes": [{"path": list(p), "sizes": list(s), "weights": list(w)} for p, (s, w) in self.nodes],
            }
        return {"kind": self.kind}

    @classmethod
    def from_dict(cls, data: dict | None) -> Prior:
        """The prior of :meth:`to_dict` (None, from a plan saved before priors existed: uniform)."""
        if data is None or data["kind"] in PRIOR_NAMES:
            return cls("uniform" if data is None else data["kind"])
        if data["kind"] == "table":
            return cls("table", table=(tuple(data["sizes"]), tuple(data["weights"])))
        nodes = tuple((tuple(n["path"]), (tuple(n["sizes"]), tuple(n["weights"]))) for n in data["nodes"])
        return cls("nodes", nodes=nodes)


UNIFORM = Prior()
