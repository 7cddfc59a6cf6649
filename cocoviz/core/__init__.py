"""The public, DP-free core: runs of equal sizes, histogram forms, node codes, the hierarchy's public facts
(:class:`~cocoviz.core.shape.Shape`), cost checks and atomic writes. No privacy, no private input.
"""
