"""``python -m gpude.implementations.jso_brest``: pack, build, fill or run Brest's jSO (see the package)."""

import sys

from . import main

sys.exit(main())
