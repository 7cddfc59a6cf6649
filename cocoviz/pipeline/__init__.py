"""The pipeline: :func:`~cocoviz.pipeline.estimate.estimate` (plan → measure → post-process), the per-level
step, Dask and the private selection of a method mix.
"""
