"""Measure: the one stage that reads private data, drawing the plan's noisy measurements node by node."""
