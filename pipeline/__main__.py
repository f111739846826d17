"""``python -m pipeline``: the pipeline's commands (pipeline.commands.main); ``topic-atlas`` and ``python -m
topic_atlas`` add ``share`` (topic_atlas.cli)."""

import sys

from pipeline.commands.main import main

if __name__ == "__main__":
    sys.exit(main())
