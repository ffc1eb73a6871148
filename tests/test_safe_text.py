"""Hostile text from servers cannot style, move the cursor or break lines on display."""

from __future__ import annotations

from bassi.core.safe_text import clean, one_line


def test_escape_sequences_and_controls_are_removed() -> None:
    hostile = (
        "\x1b[31mred\x1b[0m \x1b]0;title\x07 \x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\"
        " \x1b[2J\x1b[Hhome \x9b31m c1 \x07bell\x08 \u202eevil\r\nnext"
    )
    assert clean(hostile) == "red  link home  c1 bell evil\nnext"


def test_rich_markup_is_left_as_text_for_the_display_to_render_literally() -> None:
    assert clean("[bold red]alarm[/]") == "[bold red]alarm[/]"


def test_long_text_is_capped_with_a_visible_mark() -> None:
    out = clean("x" * 5000, max_chars=100)
    assert out.startswith("x" * 100) and out.endswith("[4,900 more characters]")


def test_one_line_takes_the_first_real_line() -> None:
    assert one_line("\n  \n  Lists   files\x1b[1m  \nmore") == "Lists files"
    assert one_line("y" * 300, max_chars=10) == "y" * 9 + "…"
