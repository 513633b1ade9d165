"""Replies as safe HTML: Markdown parsed by markdown-it-py, then cleaned by nh3 (ammonia).

Two maintained layers, so neither alone has to be right. markdown-it-py parses CommonMark (with
tables and strikethrough) with raw HTML off: a ``<script>`` in a reply is text, escaped. Images are
off too, so a reply cannot make the page fetch a stranger's URL. nh3 then keeps only the tags and
attributes on :data:`ALLOWED_TAGS` and :data:`ALLOWED_ATTRIBUTES`, drops every ``on*`` handler and
``style``, keeps links only to ``http``, ``https`` and ``mailto`` (no relative ones), and gives each
link ``rel="noopener noreferrer nofollow"``. A code block's language survives as a
``language-…`` class on its ``<code>``; nothing else keeps a class.

Only assistant replies are rendered; a member's own messages are shown as they wrote them.
"""

import re

import nh3
from markdown_it import MarkdownIt

ALLOWED_TAGS = frozenset(
    {
        "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
        "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
    }
)  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "code": {"class"}}
URL_SCHEMES = frozenset({"http", "https", "mailto"})
LINK_REL = "noopener noreferrer nofollow"
LANGUAGE_CLASS = re.compile(r"language-[A-Za-z0-9_+#.-]{1,40}\Z")

_parser = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_parser.enable(["table", "strikethrough"]).disable("image")


def keep_attribute(tag: str, attribute: str, value: str) -> str | None:
    """nh3's attribute filter: a ``class`` stays only as one code block language."""
    if attribute == "class":
        return value if tag == "code" and LANGUAGE_CLASS.match(value) else None
    return value


_cleaner = nh3.Cleaner(
    tags=set(ALLOWED_TAGS),
    attributes={tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()},
    attribute_filter=keep_attribute,
    url_schemes=set(URL_SCHEMES),
    url_relative="deny",
    link_rel=LINK_REL,
    strip_comments=True,
)


def render_reply_html(text: str) -> str:
    """The reply ``text`` as sanitised HTML, safe to insert into the chat page as it is."""
    return _cleaner.clean(_parser.render(text))
