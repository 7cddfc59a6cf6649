"""The data of a sweep: :class:`Data` (a bundled dataset or a given tree, cut and trimmed),
:func:`regional_cut`, and method mixes (:func:`parse_mix`, :func:`mix_label`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd

from cocoviz.datasets.geography import WEST_COAST  # the states of the paper's 3-level "West Coast" cut
from cocoviz.errors import ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.plan import METHODS

__all__ = [
    "Data",
    "regional_cut",
    "parse_mix",
    "mix_label",
    "MIX_SEPARATOR",
    "Loader",
    "WEST_COAST",
    "as_data",
    "methods_for",
]

#: Separator of per-level methods in a mix label, as in the paper ("Hc×Hg").
MIX_SEPARATOR = "×"

Loader = Callable[..., Hierarchy]


def _default_loader(name: str, *, scale: float | None = None, seed: int = 0) -> Hierarchy:
    try:
        from cocoviz.datasets import load_dataset
    except ImportError as exc:  # pragma: no cover - the datasets module ships with the package
        raise ParameterError(f"cannot load dataset {name!r}: cocoviz.datasets is not available ({exc})") from None
    return load_dataset(name, scale=scale, seed=seed)


_TREE_CACHE: dict[tuple, Hierarchy] = {}
_TREE_CACHE_SIZE = 8


def regional_cut(tree: Hierarchy, regions: Sequence[str]) -> Hierarchy:
    """The part of ``tree`` under the given level-1 nodes, with a new root above them.

    The paper's West Coast cut: ``regional_cut(national, ("CA", "OR", "WA"))``
    keeps the states' levels below a root that is the three states together.
    """
    if tree.depth < 1:
        raise ParameterError("a regional cut needs a hierarchy with at least one level below the root")
    regions = [str(r) for r in regions]
    present = {p[0] for p in tree.nodes(1)}
    missing = [r for r in regions if r not in present]
    if missing or not regions:
        raise ParameterError(f"regional cut: no node(s) {missing or regions} at level 1 '{tree.levels[0]}'")
    wanted = set(regions)
    parts = []
    for path in tree.nodes(tree.depth):
        if path[0] in wanted:
            sizes, counts = tree.node_runs(path)
            part = pd.DataFrame({"__size": sizes, "__count": counts})
            for i, level in enumerate(tree.levels):
                part[level] = path[i]
            parts.append(part)
    return Hierarchy.from_counts(
        pd.concat(parts, ignore_index=True), size="__size", count="__count", levels=list(tree.levels)
    )


@dataclass(frozen=True)
class Data:
    """One dataset of a sweep: a bundled dataset by name, or a given Hierarchy.

    Parameters
    ----------
    name : bundled dataset name (``cocoviz.datasets.dataset_names()``), or a label for ``tree``
    scale, seed : passed to ``load_dataset`` (None = the bundled scale)
    regions : keep only these level-1 nodes under a new root (e.g. :data:`WEST_COAST`)
    depth : keep only the first ``depth`` levels below the root (0 = the root alone)
    label : the name shown in results (default: ``name``, with ``-west`` for a West Coast cut)
    tree : a Hierarchy to use instead of loading ``name``
    """

    name: str
    scale: float | None = None
    seed: int = 0
    regions: tuple[str, ...] | None = None
    depth: int | None = None
    label: str | None = None
    tree: Hierarchy | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.regions is not None:
            object.__setattr__(self, "regions", tuple(str(r) for r in self.regions))
        if self.depth is not None and (isinstance(self.depth, bool) or int(self.depth) != self.depth or self.depth < 0):
            raise ParameterError(f"depth must be a whole number >= 0, got {self.depth!r}")

    @property
    def key(self) -> str:
        """The dataset's name in results."""
        if self.label:
            return self.label
        if self.regions is not None and tuple(self.regions) == WEST_COAST:
            return f"{self.name}-west"
        return self.name

    def load(self, loader: Loader | None = None) -> Hierarchy:
        """The hierarchy, cut and trimmed as specified (bundled data is cached per process)."""
        cache_key = (self.name, self.scale, self.seed, self.regions, self.depth)
        use_cache = self.tree is None and loader is None
        if use_cache and cache_key in _TREE_CACHE:
            return _TREE_CACHE[cache_key]
        if self.tree is not None:
            tree = self.tree
        else:
            tree = (loader or _default_loader)(self.name, scale=self.scale, seed=self.seed)
        if self.regions is not None:
            tree = regional_cut(tree, self.regions)
        if self.depth is not None:
            if self.depth > tree.depth:
                raise ParameterError(
                    f"dataset {self.key!r} has {tree.depth} level(s) below the root, cannot keep {self.depth}"
                )
            tree = tree.keep_levels(list(tree.levels[: self.depth]))
        if use_cache:
            if len(_TREE_CACHE) >= _TREE_CACHE_SIZE:
                _TREE_CACHE.pop(next(iter(_TREE_CACHE)))
            _TREE_CACHE[cache_key] = tree
        return tree


def as_data(item, k: int) -> Data:
    """A name, :class:`Data` or :class:`~cocoviz.hierarchy.Hierarchy` as :class:`Data` (a tree is named ``data{k}``)."""
    if isinstance(item, Data):
        return item
    if isinstance(item, str):
        return Data(item)
    if isinstance(item, Hierarchy):
        return Data(f"data{k}", tree=item)
    raise ParameterError(f"a dataset must be a name, a Data or a Hierarchy, got {type(item).__name__}")


# ---------------------------------------------------------------------- mixes
def parse_mix(mix: str | Sequence[str]) -> tuple[str, ...]:
    """A method mix as a tuple, one method per level; a single method means every level.

    >>> parse_mix("Hc×Hg"), parse_mix("Hg*Hg"), parse_mix(["Hc", "Hc"]), parse_mix("Hc")
    (('Hc', 'Hg'), ('Hg', 'Hg'), ('Hc', 'Hc'), ('Hc',))
    """
    if isinstance(mix, str):
        text = mix
        for sep in ("*", "x", ",", " "):
            text = text.replace(sep, MIX_SEPARATOR)
        parts = tuple(p for p in text.split(MIX_SEPARATOR) if p)
    else:
        parts = tuple(str(m) for m in mix)
    if not parts:
        raise ParameterError(f"empty method mix {mix!r}")
    for m in parts:
        if m not in METHODS:
            raise ParameterError(f"unknown method {m!r} in mix {mix!r}; methods are {tuple(METHODS)}")
    return parts


def mix_label(methods: Sequence[str]) -> str:
    """``("Hc", "Hg")`` → ``"Hc×Hg"``."""
    return MIX_SEPARATOR.join(methods)


def methods_for(mix: tuple[str, ...], n_levels: int, dataset: str) -> tuple[str, ...]:
    """One method per level from a mix: a single method for every level, or one per level (refused otherwise)."""
    if len(mix) == 1:
        return mix * n_levels
    if len(mix) != n_levels:
        raise ParameterError(
            f"mix {mix_label(mix)} has {len(mix)} methods but dataset {dataset!r} has "
            f"{n_levels} levels (the root and {n_levels - 1} below it)"
        )
    return mix
