"""`python -m crowdopt` = the `crowdopt` command."""

import sys

from .cli import main

sys.exit(main())
