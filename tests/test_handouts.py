"""The handouts' Markdown (bnma_core.handouts.markdown_html) and print sizing; the printed
PDFs are checked in tests/browser/test_browser_teach.py."""

from hypothesis import given
from hypothesis import strategies as st

from bnma_core.handouts import PRINT_HEIGHT, PRINT_WIDTH, _for_print, markdown_html


def test_markdown_of_the_lessons():
    out = markdown_html("**The idea.** ASIA's class *smoke*, `code`.\n\n- one\n- two *b*")
    assert out == ("<p><strong>The idea.</strong> ASIA's class <em>smoke</em>, "
                   "<code>code</code>.</p><ul><li>one</li><li>two <em>b</em></li></ul>")
    assert markdown_html("1 * 2 * 3 and 2*3") == "<p>1 * 2 * 3 and 2*3</p>"  # no emphasis


@given(st.text(max_size=200))
def test_markdown_never_passes_markup_through(text):
    """Escaped first: any '<' of the text is shown, never parsed."""
    out = markdown_html(text)
    for tag in ("<p>", "</p>", "<ul>", "</ul>", "<li>", "</li>", "<strong>", "</strong>",
                "<em>", "</em>", "<code>", "</code>"):
        out = out.replace(tag, "")
    assert "<" not in out and ">" not in out


def test_figures_are_sized_for_the_page():
    import plotly.graph_objects as go

    small = _for_print(go.Figure())
    tall = _for_print(go.Figure(layout={"height": 2000}))
    assert (small.layout.width, small.layout.height) == (PRINT_WIDTH, PRINT_HEIGHT)
    assert tall.layout.height == 600
