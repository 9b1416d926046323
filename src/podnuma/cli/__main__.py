"""``python -m podnuma.cli``."""

import sys

from podnuma.cli.app import main

sys.exit(main())
