"""``python -m arena.cli``: the same as the ``gin-arena`` command."""

import sys

from arena.cli import main

sys.exit(main())
