"""Finding the tool a person means, across every connected server."""

from bassi.core.search.index import Found, SearchHit, ToolIndex

__all__ = ["Found", "SearchHit", "ToolIndex"]
