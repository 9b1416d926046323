"""Sub-commands of ``podnuma`` kept out of ``cli.py`` (registered there)."""
