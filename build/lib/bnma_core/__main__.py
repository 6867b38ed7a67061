"""``python -m bnma_core``: the command line (see :mod:`bnma_core.cli`)."""

import sys

from .cli import main

sys.exit(main())
