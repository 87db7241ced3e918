"""A store written by the code of format version 3 (run under an export of that code, see
test_store_upgrade), and the answers a store gives: run as a script, it builds the store and
writes its answers as JSON. Uses only the API both versions share."""

from __future__ import annotations

import json
import random
import sys
from typing import Any

from neardup.config import StoreConfig, TemplateConfig
from neardup.document import Document
from neardup.store import open_store

CONFIG = StoreConfig(keep_shingles=True, templates=TemplateConfig(min_pages=5))
FLUSH_EVERY = 25


def pages() -> list[Document]:
    """120 pages on 4 hosts (a frame each, so that template counts matter), one in five a
    near-copy of the page before it, shuffled."""
    rng = random.Random(11)
    vocabulary = [f"w{i}" for i in range(3000)]
    docs: list[Document] = []
    for number in range(4):
        host = f"site{number}.example"
        nav = " ".join(rng.choices(vocabulary, k=400))
        body = ""
        for page in range(30):
            if page % 5 == 4:
                words = body.split()
                words[rng.randrange(len(words))] = "edited"
                body = " ".join(words)
            else:
                body = " ".join(rng.choices(vocabulary, k=150))
            html = (f"<html><body><nav>{nav}</nav><article><p>{body}</p></article>"
                    "</body></html>")
            docs.append(Document(id=f"{host}/{page}", raw=html.encode(), kind="html",
                                 url=f"http://{host}/{page}", host=host))
    rng.shuffle(docs)
    return docs


def build(root: str) -> None:
    """Three flushes (merged along the way), then 20 pages left in the insert log."""
    docs = pages()
    with open_store(root, CONFIG, flush_every=FLUSH_EVERY) as store:
        for start in range(0, 90, 10):
            store.add(docs[start:start + 10])
        store.add(docs[90:110])


def answers(store: Any) -> dict[str, Any]:
    probes = pages()[::7]
    return json.loads(json.dumps({
        "documents": len(store),
        "query": [[[m.doc, m.distance, m.relation, m.resemblance, m.template_values]
                   for m in store.query(probe)] for probe in probes],
        "similar": [[[m.doc, m.resemblance, m.containment, m.template_values]
                     for m in store.similar(probe, resemblance=0.2)] for probe in probes],
        "templates": store.host_templates()}))


if __name__ == "__main__":
    build(sys.argv[1])
    with open_store(sys.argv[1], read_only=True) as built, open(sys.argv[2], "w") as out:
        json.dump(answers(built), out)
