"""``python -m cocoviz``: see :mod:`cocoviz.cli`."""

from cocoviz.cli import main

raise SystemExit(main())
