"""Turn text from servers and the model into display objects that cannot style the terminal.

Everything a server or the model says (tool names, descriptions, arguments, results, replies)
passes through here before it reaches a widget: ``clean`` strips escape sequences and control
characters, and wrapping the result in ``Content``/``Text`` directly (never ``from_markup``)
keeps ``[bold red]`` and ``[@click=...]`` as the literal characters they are.
"""

from __future__ import annotations

from rich.text import Text
from textual.content import Content

from bassi.core.safe_text import clean, one_line


def plain(text: str, style: str = "", *, max_chars: int | None = None) -> Content:
    """Untrusted text as inert Content; ``style`` may use theme variables ($error, ...)."""
    content = Content(clean(text, max_chars=max_chars))
    return content.stylize(style) if style else content


def plain_line(text: str, max_chars: int = 120, style: str = "") -> Content:
    """The first line of untrusted text, for headers and one-line summaries."""
    content = Content(one_line(text, max_chars))
    return content.stylize(style) if style else content


def plain_text(text: str, style: str = "", *, max_chars: int | None = None) -> Text:
    """Untrusted text as an inert Rich ``Text``, for Rich renderables such as DataTable cells,
    which would parse a plain ``str`` as markup."""
    return Text(clean(text, max_chars=max_chars), style=style)
