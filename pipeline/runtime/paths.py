"""Where the project's own folders are: the checkout's root and its ``.cache`` folder.

The package is installed editable (``make setup``), so its modules live in the checkout and the root is two folders
above this file. ``.cache`` holds the embedding store, the layout store, encoders and logs; each has an environment
variable that moves it elsewhere (see the modules that use them).
"""

from __future__ import annotations

from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[2]
CACHE_FOLDER = PROJECT_ROOT / ".cache"
