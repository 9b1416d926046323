"""``python -m podnuma.cli``."""

import sys

from podnuma.cli import main

sys.exit(main())
