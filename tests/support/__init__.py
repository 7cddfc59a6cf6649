"""Helpers the tests share: strategies, digests, capped runs, file builders, the AppTest harness."""
