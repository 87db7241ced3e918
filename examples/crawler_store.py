"""A crawler's loop: before keeping a page, ask the store whether it holds a near-copy.

    python examples/crawler_store.py [STORE_FOLDER]

Each page is queried first (stored pages within 3 bits of its 64-bit simhash), then added. The
store is a folder (a temporary one by default) that a later run opens again.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import neardup

BODY = ("<p>The city council met on Tuesday to discuss the new tram line, which will link the "
        "central station with the university campus and the hospital by the end of next year. "
        "Engineers presented three routes: one along the river embankment, one through the old "
        "market quarter and one that follows the ring road past the stadium. Residents of the "
        "market quarter asked how long their streets would be closed during construction, and "
        "shop owners wanted to know whether deliveries could continue in the mornings. The "
        "council promised a public exhibition of the plans in the library next month, where "
        "every household may leave written comments before the final vote in the autumn. The "
        "budget, shared between the city and the regional transport authority, covers twelve "
        "new vehicles, a depot near the northern bypass and seven kilometres of track.</p>")
PAGES = [
    ("https://news.example/tram", f"<html><body><h1>Tram line</h1>{BODY}</body></html>"),
    ("https://mirror.example/tram", f"<html><body><h1>Tram line</h1>{BODY}</body></html>"),
    ("https://blog.example/tram",
     f"<html><body><h1>Tram line</h1>{BODY.replace('next year', 'next spring')}</body></html>"),
    ("https://recipes.example/bread", "<html><body><p>Mix flour, water, salt and yeast; let the "
     "dough rise overnight and bake it hot for forty minutes.</p></body></html>"),
]


def main(folder: Path) -> None:
    with neardup.open_store(folder / "pages.store") as store:
        for number, (url, html) in enumerate(PAGES):
            page = neardup.Document(id=str(number), raw=html.encode(), kind="html", url=url)
            matches = store.query(page)
            copies = ", ".join(f"{m.url} ({m.distance} bits)" for m in matches) or "none"
            print(f"{url}: near-copies already stored: {copies}")
            store.add([page])


if __name__ == "__main__":
    if len(sys.argv) > 1:
        main(Path(sys.argv[1]))
    else:
        with tempfile.TemporaryDirectory() as folder:
            main(Path(folder))
