"""bassi: a terminal chat agent that knows every tool you connect to it."""

__version__ = "0.1.0"
