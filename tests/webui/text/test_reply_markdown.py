"""A reply's Markdown becomes HTML that is safe to insert: hostile input keeps no script, no event
handler, no ``javascript:`` or ``data:`` link, and no tag outside the allow-list."""

import re
from html.parser import HTMLParser

import pytest

from webui.models import Message
from webui.text.reply_markdown import ALLOWED_TAGS, render_reply_html
from webui.web.messages_json import MessageSerializer

HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=https://evil.example/x.js></SCRIPT>",
    '<img src=x onerror="alert(1)">',
    '<a href="https://e.example" onclick="alert(1)">x</a>',
    "<iframe src=https://evil.example></iframe>",
    "<style>body{display:none}</style>",
    '<svg onload="alert(1)"><circle/></svg>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](java&#x09;script:alert(1))",
    "[click](&#106;avascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "<javascript:alert(1)>",
    '[x](https://e.example "a\\" onmouseover=\\"alert(1)")',
    '```js" onclick="alert(1)\nx\n```',
    "[**<script>alert(1)</script>**](https://e.example)",
    "![x](javascript:alert(1))",
    '<div style="position:fixed">cover</div>',
    "<!-- <script>alert(1)</script> -->",
]


class Elements(HTMLParser):
    """Every element the browser would build from the HTML, with its attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser.found


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_markdown_keeps_no_script_handler_or_dangerous_link(text: str) -> None:
    found = elements(render_reply_html(text))

    for tag, attributes in found:
        assert tag in ALLOWED_TAGS
        assert not [name for name in attributes if name.startswith("on") or name == "style"]
        assert attributes.get("href") is None or re.match(
            r"(https?://|mailto:)", attributes["href"]
        )
        assert attributes.get("class") is None or re.fullmatch(
            r"language-[A-Za-z0-9_+#.-]+", attributes["class"]
        )


def test_a_script_tag_is_shown_as_text() -> None:
    assert render_reply_html("<script>alert(1)</script>") == (
        "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>\n"
    )


def test_a_list_renders_as_a_list() -> None:
    assert render_reply_html("- tea\n- cake") == "<ul>\n<li>tea</li>\n<li>cake</li>\n</ul>\n"


def test_a_code_block_keeps_its_text_and_language_and_nothing_else() -> None:
    html = render_reply_html("```python\nif a < b and c > d:\n    print('<b>')\n```")

    assert html == (
        '<pre><code class="language-python">'
        "if a &lt; b and c &gt; d:\n    print('&lt;b&gt;')\n</code></pre>\n"
    )


def test_a_language_that_is_not_a_plain_name_loses_its_class() -> None:
    assert render_reply_html('```a" onclick="x\nz\n```') == "<pre><code>z\n</code></pre>\n"


def test_links_keep_http_and_mailto_with_rel_and_drop_relative_ones() -> None:
    html = render_reply_html(
        "[site](https://e.example/a?b=1&c=2) [mail](mailto:a@e.example) [here](/admin/)"
    )

    assert (
        '<a href="https://e.example/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">site</a>'
        in html
    )
    assert '<a href="mailto:a@e.example" rel="noopener noreferrer nofollow">mail</a>' in html
    assert '<a rel="noopener noreferrer nofollow">here</a>' in html


def test_markdown_nested_in_a_link_renders_inside_it() -> None:
    assert render_reply_html("[**bold** and `code`](https://e.example)") == (
        '<p><a href="https://e.example" rel="noopener noreferrer nofollow">'
        "<strong>bold</strong> and <code>code</code></a></p>\n"
    )


def test_html_entities_stay_entities_and_never_become_tags() -> None:
    html = render_reply_html("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &copy;")

    assert html == "<p>&lt;script&gt;alert(1)&lt;/script&gt; &amp; ©</p>\n"


def test_an_image_is_not_fetched_its_address_is_a_link() -> None:
    html = render_reply_html("![tracker](https://evil.example/pixel.png)")

    assert "<img" not in html
    assert 'href="https://evil.example/pixel.png"' in html


def test_tables_and_strikethrough_render() -> None:
    html = render_reply_html("| a | b |\n|---|---|\n| 1 | 2 |\n\n~~old~~")

    assert "<table>" in html
    assert "<td>1</td>" in html
    assert "<s>old</s>" in html


@pytest.mark.django_db
def test_the_api_carries_html_for_replies_and_none_for_members_messages(conversation) -> None:
    user = Message.objects.create(conversation=conversation, role="user", content="- *mine*")
    reply = Message.objects.create(conversation=conversation, role="assistant", content="- *hers*")

    assert MessageSerializer(user).data["html"] is None
    assert MessageSerializer(user).data["content"] == "- *mine*"
    assert MessageSerializer(reply).data["html"] == "<ul>\n<li><em>hers</em></li>\n</ul>\n"
