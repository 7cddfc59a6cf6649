"""cocoviz: differentially private hierarchical count-of-counts histograms.

The method of Kuo, Chiu, Kifer, Hay and Machanavajjhala: per-node Hc or Hg
estimates with isotonic regression, made consistent top-down by an optimal
matching of parent to child groups and inverse-variance merging.
"""
from cocoviz.consistency import match_groups
from cocoviz.datasets import DEFAULT_DATASET, dataset_card, dataset_names, load_dataset
from cocoviz.hierarchy import Hierarchy
from cocoviz.io import load_upload, read_table
from cocoviz.mechanisms import Budget
from cocoviz.metrics import emd, error_by_size, omniscient_emd
from cocoviz.release import Release, compile_kernels, estimate, select_mix

__all__ = ["Hierarchy", "estimate", "Release", "Budget", "match_groups", "emd", "error_by_size",
           "omniscient_emd", "select_mix", "compile_kernels", "dataset_names", "load_dataset", "dataset_card", "DEFAULT_DATASET",
           "load_upload", "read_table"]
