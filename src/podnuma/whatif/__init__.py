"""What-if tools for pod-level resources (KEP-5526): ``podnuma compare`` and ``podnuma advise``."""
