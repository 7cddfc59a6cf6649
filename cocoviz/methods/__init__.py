"""Estimation methods: the registry (:data:`~cocoviz.methods.registry.METHODS`), the per-node fits (naive, Hc, Hg,
Hcp), isotonic regression, priors and IDE, and the whole-level compiled batches.
"""
