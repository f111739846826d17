"""``python -m topic_atlas``: the ``topic-atlas`` command line (topic_atlas.cli)."""

import sys

from topic_atlas.cli import main

if __name__ == "__main__":
    sys.exit(main())
