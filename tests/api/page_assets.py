"""The files an HTML page loads: each `<script src>` and `<link rel="stylesheet" href>`."""

from __future__ import annotations

from dataclasses import dataclass
from html.parser import HTMLParser


@dataclass(frozen=True)
class PageAsset:
    """One file a page loads, with the integrity hash the page demands of it."""

    url: str
    integrity: str | None


class _AssetTags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.assets: list[PageAsset] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        url = None
        if tag == "script":
            url = attributes.get("src")
        elif tag == "link" and attributes.get("rel") == "stylesheet":
            url = attributes.get("href")
        if url:
            self.assets.append(PageAsset(url, attributes.get("integrity")))


def page_assets(html: str) -> list[PageAsset]:
    """The scripts and stylesheets `html` loads, in document order."""
    parser = _AssetTags()
    parser.feed(html)
    parser.close()
    return parser.assets
