"""``python -m podnuma.cli``."""

from podnuma.cli import run

run()
