"""``python -m pipeline``: the same command line as ``topic-atlas`` (pipeline.commands.main)."""

import sys

from pipeline.commands.main import main

if __name__ == "__main__":
    sys.exit(main())
