"""Evaluate: where the truth meets a release (errors per node and size, metrics, comparisons, baselines)."""
