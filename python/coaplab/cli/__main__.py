"""``python -m coaplab.cli``: the console script ``coaplab`` (what the tests run, with the
interpreter under test)."""

import sys

from . import main

sys.exit(main())
