"""Text from documents: HTML extraction (``html``)."""

from neardup.text.html import (
    Page,
    decode_payload,
    extract_links,
    extract_text,
    html_blocks,
    parse_html,
    parse_page,
)

__all__ = [
    "Page",
    "decode_payload",
    "extract_links",
    "extract_text",
    "html_blocks",
    "parse_html",
    "parse_page",
]
