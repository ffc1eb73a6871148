"""The Textual application: a client of ``bassi.core``."""
