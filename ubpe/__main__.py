"""``python -m ubpe``: the command line (see :mod:`ubpe.cli`)."""

from .cli import main

if __name__ == "__main__":
    raise SystemExit(main())
