"""Finding the tool a person means, across every connected server."""

from bassi.core.search.index import SearchHit, ToolIndex

__all__ = ["SearchHit", "ToolIndex"]
