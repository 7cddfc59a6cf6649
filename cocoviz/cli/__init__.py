"""The command line: ``python -m cocoviz ...`` (:mod:`cocoviz.cli.main`) and ``release``
(:mod:`cocoviz.cli.release`)."""

from cocoviz.cli.main import main

__all__ = ["main"]
