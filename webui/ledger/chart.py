"""A conversation's ledger as a small bar chart, drawn on the server as inline SVG (no script).

One bar per turn, its height the share of the turn's cacheable input read from the cache; a turn
with drift is drawn in the warning colour, and a turn whose prompt was below the minimum cacheable
length as a short grey tick (nothing could be cached, so it is not a miss). Each bar carries a
``<title>`` that says the same in words, for a pointer or a screen reader.
"""

from collections.abc import Sequence

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from webui.ledger.report import TurnShare

BAR, GAP, HEIGHT = 8, 2, 60
COLOURS = {"cached": "#2f7d4f", "drift": "#b3261e", "short": "#9e9e9e"}


def _bar(index: int, turn: TurnShare) -> tuple[object, ...]:
    x = index * (BAR + GAP)
    if turn.share is None:
        words = (
            f"Turn {turn.number}: below the minimum cacheable length ({turn.input_tokens} tokens)"
        )
        return (x, HEIGHT - 2, BAR, 2, COLOURS["short"], words)
    # A drift at 0% still shows: its bar is never shorter than a few units.
    height = max(4 if turn.drifted else 1, round(turn.share * HEIGHT))
    words = f"Turn {turn.number}: {turn.share:.0%} of its cacheable input read from the cache"
    if turn.drifted:
        words += " (drift)"
    colour = COLOURS["drift"] if turn.drifted else COLOURS["cached"]
    return (x, HEIGHT - height, BAR, height, colour, words)


def cached_share_chart(turns: Sequence[TurnShare]) -> SafeString:
    """The SVG for ``turns`` (oldest first), or a sentence when the ledger has none."""
    if not turns:
        return format_html("<p>{}</p>", "No vessel calls in the ledger yet.")
    width = len(turns) * (BAR + GAP)
    bars = format_html_join(
        "",
        '<rect x="{}" y="{}" width="{}" height="{}" fill="{}"><title>{}</title></rect>',
        (_bar(index, turn) for index, turn in enumerate(turns)),
    )
    drifts = sum(1 for turn in turns if turn.drifted)
    label = f"Cached share per turn over {len(turns)} turns, {drifts} with drift"
    return format_html(
        '<svg class="cache-chart" role="img" aria-label="{}" viewBox="0 0 {} {}" '
        'preserveAspectRatio="none" style="width:100%;max-width:{}px;height:{}px">'
        '<line x1="0" y1="0" x2="{}" y2="0" stroke="#ccc" stroke-dasharray="2"/>{}</svg>'
        "<p>{}. Green: read from the cache (top line: 100%); red: drift; grey: below the "
        "minimum cacheable length.</p>",
        label,
        width,
        HEIGHT,
        max(width * 2, 200),
        HEIGHT,
        width,
        bars,
        label,
    )
