"""podnuma: the kubelet's node resource managers, reproduced."""

from podnuma.buildinfo import engine_build

__all__ = ["engine_build"]
