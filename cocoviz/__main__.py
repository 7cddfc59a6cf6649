"""``python -m cocoviz``: see :mod:`cocoviz.cli.main`."""

from cocoviz.cli.main import main

raise SystemExit(main())
