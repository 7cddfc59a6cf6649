"""Publishable simultaneous bands on a node's histogram from its noisy measurements (no ε spent)."""
