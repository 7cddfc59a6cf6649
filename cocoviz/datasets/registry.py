"""The bundled datasets: their descriptions, generation by name, and cached loading."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import pandas as pd

from cocoviz.datasets import census, housing, race, taxi, toy
from cocoviz.datasets.common import PAPER_MAX_SIZE, check_scale, check_seed
from cocoviz.datasets.geography import WEST_COAST
from cocoviz.errors import InputError, ParameterError
from cocoviz.hierarchy import Hierarchy
from cocoviz.measure.identity import named_identity

__all__ = [
    "DATA_DIR",
    "DEFAULT_DATASET",
    "BUNDLE_SEED",
    "Dataset",
    "dataset_names",
    "bundled_names",
    "dataset",
    "generate",
    "load_dataset",
    "DATASETS",
    "load_cached",
    "persons_identity",
]

#: Where the bundled files live (the repository's ``data/`` folder).
DATA_DIR = Path(__file__).resolve().parents[2] / "data"

#: The dataset the dashboard opens with: the paper's West Coast housing at full size (35M groups, 3 levels).
DEFAULT_DATASET = "housing-west"

#: Seed of the bundled defaults.
BUNDLE_SEED = 0


@dataclass(frozen=True)
class Dataset:
    """What a dataset imitates, how it is made, and where its bundled default lives.

    Attributes
    ----------
    name, title : str
        Identifier (``load_dataset(name)``) and a human title.
    imitates, recipe : str
        The paper's dataset it stands in for, and how it is generated.
    root : str
        What the root of the hierarchy stands for.
    levels : tuple of str
        Level columns below the root, top down.
    paper : str or None
        Key of the paper's figures in :data:`PAPER_FIGURES` (scale 1.0 targets
        of the national data).
    bundle_scale : float or None
        Scale of the bundled default (None: fixed data, no scale).
    regions : tuple of str or None
        States kept, for a regional cut of national data.
    public_max_size : int
        A public bound K on group size, as the paper used.
    bundled : bool
        Whether ``data/`` holds its default; False for the census-scale
        datasets, always generated on demand (at ``bundle_scale`` by default).
    """

    name: str
    title: str
    imitates: str
    recipe: str
    root: str
    levels: tuple[str, ...]
    paper: str | None
    bundle_scale: float | None
    regions: tuple[str, ...] | None = None
    public_max_size: int = PAPER_MAX_SIZE
    bundled: bool = True

    @property
    def filename(self) -> str:
        """Name of the bundled file in :data:`DATA_DIR`."""
        return "toy.csv" if self.name == "toy" else f"{self.name}.parquet"

    def generate(self, scale: float, seed: int) -> pd.DataFrame:
        """The per-leaf counts table (the persons table for the toy example)."""
        if self.name == "toy":
            return toy.toy_persons()
        family = self.name.split("-")[0]
        if not self.bundled:
            return census.generate_census(scale, seed, level=self.levels[-1], only_states=self.regions)
        if family == "housing":
            return housing.generate_housing(scale, seed, only_states=self.regions)
        if family in race.RACES:
            return race.generate_race(family, scale, seed, only_states=self.regions)
        return taxi.generate_taxi(scale, seed)

    @property
    def population(self) -> str:
        """The synthetic population it is drawn from: datasets of one population share their people.

        A regional cut is the same states of the national draw (same seed), a smaller scale thins the same draw,
        and the census-scale datasets split the housing draw over finer regions: so ``housing``,
        ``housing-west`` and ``housing-us-*`` are one population (``"housing"``), ``white`` and ``white-west``
        another, and so on.
        """
        if not self.bundled:
            return "housing"
        return self.paper or self.name

    def build(self, table: pd.DataFrame) -> Hierarchy:
        """The hierarchy of a table made by :meth:`generate` (or read from the bundle)."""
        if self.name == "toy":
            return Hierarchy.from_persons(table, group="group", levels=list(self.levels), groups=toy.toy_groups())
        return Hierarchy.from_counts(table, size="size", count="count", levels=list(self.levels))


_WEST = (
    " Cut to the West Coast, as in the paper's 3-level experiments: the Census Bureau's Pacific division "
    "(Alaska, California, Hawaii, Oregon, Washington)."
)
_STATE_LEVELS = ("state", "county")
# Per race: title, the paper's dataset it imitates, and how that one looks.
_RACES = {
    "white": ("White persons per census block", "White race distribution", "dense, sizes from 0 to a few thousand"),
    "hawaiian": (
        "Native Hawaiian and Pacific Islander persons per census block",
        "Hawaiian race distribution",
        "sparse, most blocks 0, concentrated in Hawaii",
    ),
}


def _race_datasets(key: str) -> tuple[Dataset, Dataset]:
    """The national and West Coast datasets of one race."""
    title, imitates, looks = _RACES[key]
    return (
        Dataset(
            key,
            title,
            f"the paper's {imitates} (2010 SF1): {looks}",
            race.recipe(key),
            "national",
            _STATE_LEVELS,
            key,
            0.09,
        ),
        Dataset(
            f"{key}-west",
            f"{title}, West Coast",
            f"the paper's {imitates} as used in its 3-level experiments: West Coast / state / county",
            race.recipe(key) + _WEST,
            "West Coast",
            _STATE_LEVELS,
            key,
            0.66,
            WEST_COAST,
        ),
    )


DATASETS: tuple[Dataset, ...] = (
    Dataset(
        "toy",
        "The slides' toy example",
        "the Persons table of the paper's slides (teaching example)",
        toy.RECIPE,
        "everyone",
        ("region",),
        None,
        None,
        public_max_size=10,
    ),
    Dataset(
        "housing",
        "Partially synthetic housing",
        "the paper's partially synthetic housing data (2010 Census SF1 household sizes with a heavy tail)",
        housing.RECIPE,
        "national",
        _STATE_LEVELS,
        "housing",
        0.004,
    ),
    Dataset(
        "housing-west",
        "Partially synthetic housing, West Coast",
        "the paper's housing data as used in its 3-level experiments: West Coast / state / county",
        housing.RECIPE + _WEST,
        "West Coast",
        _STATE_LEVELS,
        "housing",
        1.0,
        WEST_COAST,
    ),
    *_race_datasets("white"),
    *_race_datasets("hawaiian"),
    Dataset(
        "taxi",
        "NYC taxi pickups per medallion and neighbourhood",
        "the paper's 2013 NYC taxi data: Manhattan / upper, lower / 28 neighbourhoods",
        taxi.RECIPE,
        "Manhattan",
        ("half", "neighbourhood"),
        "taxi",
        1.0,
    ),
)
_CENSUS_IMITATES = (
    "the 2010 Census's household sizes over the 2020 geography: about 3,200 counties, 85,000 tracts, "
    "242,000 block groups and 8.1 million blocks, a third of them empty (a stand-in for census-scale runs; not one "
    "of the paper's datasets)"
)
# Generated on demand, never bundled: the dashboard opens them at a reduced scale (one tract per county or so).
_ON_DEMAND: tuple[Dataset, ...] = tuple(
    Dataset(
        f"housing-us-{plural}",
        f"Census-scale housing by {title}",
        _CENSUS_IMITATES,
        census.RECIPE,
        "national",
        census.CENSUS_LEVELS[:depth],
        None,
        0.01,
        bundled=False,
    )
    for plural, title, depth in (
        ("tracts", "census tract", 3),
        ("blockgroups", "block group", 4),
        ("blocks", "census block", 5),
    )
)
_BY_NAME = {d.name: d for d in (*DATASETS, *_ON_DEMAND)}


def dataset_names() -> list[str]:
    """Names accepted by :func:`load_dataset`, the toy example first.

    Examples
    --------
    >>> dataset_names()[:3]
    ['toy', 'housing', 'housing-west']
    """
    return [d.name for d in (*DATASETS, *_ON_DEMAND)]


def bundled_names() -> list[str]:
    """Names of the datasets whose default is a file in ``data/`` (the others are generated on demand)."""
    return [d.name for d in DATASETS]


def dataset(name: str) -> Dataset:
    """The description of dataset ``name``."""
    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise ParameterError(f"unknown dataset {name!r}; choose one of {dataset_names()}") from None


def _refuse_scale(spec: Dataset, scale: float | None) -> None:
    """A fixed dataset (the toy example) takes no scale."""
    if spec.bundle_scale is None and scale is not None:
        raise ParameterError(f"dataset {spec.name!r} is fixed: it has no scale")


def generate(name: str, *, scale: float | None = None, seed: int = 0) -> pd.DataFrame:
    """The table of dataset ``name``: per-leaf counts (persons for ``toy``).

    ``scale=None`` means the bundled default's scale.
    """
    spec = dataset(name)
    _refuse_scale(spec, scale)
    if spec.bundle_scale is None:
        return spec.generate(1.0, 0)
    return spec.generate(spec.bundle_scale if scale is None else check_scale(scale), check_seed(seed))


def persons_identity(name: str, *, seed: int = 0) -> str:
    """The privacy ledger's identity of dataset ``name``'s persons (:mod:`cocoviz.measure.identity`): its
    :attr:`Dataset.population` and the seed, whatever the scale, the regional cut or the levels kept.

    Every hierarchy built from the same synthetic people so counts against one budget cap; a scale or a cut
    that holds only some of them counts with the rest (a cap that errs on the side of spending).

    >>> persons_identity("housing") == persons_identity("housing-west") == persons_identity("housing-us-blocks")
    True
    >>> taxi = persons_identity("taxi")
    >>> persons_identity("housing") == taxi, persons_identity("taxi", seed=1) == taxi
    (False, False)
    """
    return named_identity("bundled population", dataset(name).population, str(check_seed(seed)))


def load_dataset(
    name: str, *, scale: float | None = None, seed: int = 0, data_dir: str | Path | None = None
) -> Hierarchy:
    """A dataset as a :class:`~cocoviz.hierarchy.Hierarchy`.

    Parameters
    ----------
    name : str
        One of :func:`dataset_names`.
    scale : float, optional
        None (default) loads the bundled default from ``data/``; a number
        generates the dataset at that scale (1.0 = the paper's size).
    seed : int
        Seed of the generator.  The bundled files were made with seed 0;
        another seed with ``scale=None`` generates at the bundled scale.
    data_dir : path, optional
        Folder of the bundled files (default :data:`DATA_DIR`).

    Returns
    -------
    Hierarchy
        Shared between calls with the same arguments (it is cached): treat
        it as read-only.

    Examples
    --------
    >>> tree = load_dataset("taxi")
    >>> tree.levels, tree.summary()["nodes_per_level"]
    (('half', 'neighbourhood'), [1, 2, 28])
    """
    spec = dataset(name)
    _refuse_scale(spec, scale)
    seed = check_seed(seed)
    if scale is not None:
        scale = check_scale(scale)
    folder = Path(data_dir) if data_dir is not None else DATA_DIR
    return load_cached(name, scale, seed, str(folder))


@lru_cache(maxsize=8)
def load_cached(name: str, scale: float | None, seed: int, folder: str) -> Hierarchy:
    spec = _BY_NAME[name]
    path = Path(folder) / spec.filename
    if scale is None and seed == BUNDLE_SEED and spec.name != "toy" and spec.bundled and path.exists():
        try:
            table = pd.read_parquet(path)
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors vary (ArrowInvalid, OSError): name the file
            raise InputError(
                f"unreadable file: the bundled file {str(path)!r} of {name!r} cannot be read "
                f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'corrupt'}); "
                "delete it to regenerate it"
            ) from None
        return spec.build(table)
    # The toy table lives in code; a missing bundle is regenerated (same seed, same data).
    return spec.build(generate(name, scale=scale, seed=seed))
