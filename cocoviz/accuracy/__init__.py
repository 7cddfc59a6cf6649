"""Accuracy of a release, from public facts and the noisy measurements only: publishable intervals
(:mod:`~cocoviz.accuracy.intervals`) and the experimental stated errors (:mod:`~cocoviz.accuracy.stated`).
"""
