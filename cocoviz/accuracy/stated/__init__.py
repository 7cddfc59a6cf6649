"""Stated errors (experimental): the variance a release states for each estimated group size."""
