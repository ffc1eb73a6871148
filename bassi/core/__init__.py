"""bassi's core: configuration, the tool registry and index, the agent session and
permissions. Nothing here imports Textual; the UI is one client of this package."""
