"""``python -m gpude.campaign plan|run|merge|pack ...`` (the package's docstring)."""

import sys

from .cli import main

sys.exit(main())
