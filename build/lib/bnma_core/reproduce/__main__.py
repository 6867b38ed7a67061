"""``python -m bnma_core.reproduce PAPER [...]`` — see :mod:`bnma_core.reproduce.cli`."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
