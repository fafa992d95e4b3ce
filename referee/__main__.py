"""``python -m referee``: the ``referee`` command."""

import sys

from referee.cli import main

sys.exit(main())
