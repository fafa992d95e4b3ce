"""``python -m referee.cli``: the ``referee`` command, as ``python -m referee`` is."""

import sys

from referee.cli import main

sys.exit(main())
