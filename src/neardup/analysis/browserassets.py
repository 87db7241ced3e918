"""The style sheet and script of the cluster browser, written next to its pages.

The script reads the JSON a page carries (``<script type="application/json" id="data">``) and
does two things only: filter the index by a search string, and show a chosen pair of a cluster's
members side by side, marking in each text the tokens covered by a shingle the other text also
holds. It loads nothing: no request leaves the folder.
"""

from __future__ import annotations

__all__ = ["SCRIPT", "STYLE"]

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; color: #222; margin: 1.5em auto; max-width: 1300px;
       padding: 0 1em; }
h1 { font-size: 1.4em; margin: 0 0 0.3em; } h2 { font-size: 1.15em; margin: 1.2em 0 0.4em; }
.note { color: #666; font-size: 0.85em; }
table { border-collapse: collapse; font-size: 0.85em; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 0.2em 0.5em; text-align: left;
         vertical-align: top; }
td.url { min-width: 14em; max-width: 36em; overflow-wrap: break-word; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
div.scroll { overflow-x: auto; }
div.members { max-height: 36em; overflow-y: auto; }
input[type=search] { width: 28em; font-size: 1em; padding: 0.3em; }
.pair { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
.side { border: 1px solid #ddd; border-radius: 4px; padding: 0.5em 0.7em; min-width: 0; }
.side h3 { font-size: 0.95em; margin: 0 0 0.4em; overflow-wrap: anywhere; }
.text { white-space: pre-wrap; overflow-wrap: break-word; max-height: 40em; overflow-y: auto;
        font-size: 0.9em; }
mark { background: #ffe27a; padding: 0; }
dl.scores { display: flex; flex-wrap: wrap; gap: 0.4em 1.5em; margin: 0.6em 0; }
dl.scores dt { font-size: 0.8em; color: #555; } dl.scores dd { margin: 0; font-weight: 600; }
.kind { font-size: 0.8em; color: #8a5a00; }
"""

SCRIPT = r"""
"use strict";
function data() { return JSON.parse(document.getElementById("data").textContent); }
function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}
function pct(x) { return (100 * x).toFixed(1) + "%"; }

function indexPage(d) {
  const box = document.getElementById("search"), body = document.getElementById("rows");
  const count = document.getElementById("count");
  function show() {
    const q = box.value.trim().toLowerCase();
    body.textContent = "";
    let found = 0;
    for (const c of d.clusters) {
      if (q && !c.search.includes(q)) continue;
      found += 1;
      if (found > d.shown) continue;
      const tr = el("tr");
      const first = el("td", "", "n");
      if (c.page) { const a = el("a", String(c.cluster)); a.href = c.page; first.append(a); }
      else first.textContent = String(c.cluster);
      tr.append(first, el("td", String(c.size), "n"), el("td", String(c.hosts), "n"),
                el("td", c.kind), el("td", c.url, "url"));
      body.append(tr);
    }
    count.textContent = found + " cluster(s) match" + (found > d.shown ? ", first " + d.shown +
      " shown" : "");
  }
  box.addEventListener("input", show);
  show();
}

function marks(mine, theirs, width) {
  const other = new Set(theirs.shingles), n = mine.tokens.length;
  theirs.also.forEach(x => other.add(x));
  const span = Math.min(width, n), out = new Array(n).fill(false);
  mine.shingles.forEach((s, i) => {
    if (other.has(s)) for (let j = i; j < i + span && j < n; j++) out[j] = true;
  });
  return out;
}

function fill(side, doc, text, marked, member) {
  const box = document.getElementById(side);
  box.querySelector("h3").textContent = "doc " + doc + (member.kept ? " (kept)" : "") + ": " +
    (member.url || "(no URL)");
  const pane = box.querySelector(".text");
  pane.textContent = "";
  if (!text) { pane.textContent = "(text not available: see the report's notes)"; return; }
  let run = [], state = null;
  function flush() {
    if (!run.length) return;
    const part = run.join(" ") + " ";
    pane.append(state ? el("mark", part) : document.createTextNode(part));
    run = [];
  }
  text.tokens.forEach((t, i) => { if (marked[i] !== state) { flush(); state = marked[i]; }
                                  run.push(t); });
  flush();
  if (text.truncated) pane.append(el("p", "... (first " + text.tokens.length + " of " +
                                     text.total + " tokens shown)", "note"));
}

function clusterPage(d) {
  if (!d.with_text.length) return;
  const pick = [document.getElementById("a"), document.getElementById("b")];
  const members = new Map(d.members.map(m => [m.doc, m]));
  for (const p of pick) for (const doc of d.with_text) {
    const m = members.get(doc);
    p.append(new Option("doc " + doc + (m.kept ? " (kept)" : "") + " " + (m.url || ""), doc));
  }
  const hash = new URLSearchParams(location.hash.slice(1));
  const fallback = [d.with_text[0], d.with_text[Math.min(1, d.with_text.length - 1)]];
  ["a", "b"].forEach((name, i) => {
    pick[i].value = hash.get(name) || String(fallback[i]);
    if (pick[i].value === "") pick[i].value = String(fallback[i]);  // not a member shown
  });
  function show() {
    const a = Number(pick[0].value), b = Number(pick[1].value);
    const ta = d.texts[a], tb = d.texts[b];
    const ma = ta && tb ? marks(ta, tb, d.width) : [], mb = ta && tb ? marks(tb, ta, d.width) : [];
    fill("side-a", a, ta, ma, members.get(a));
    fill("side-b", b, tb, mb, members.get(b));
    const key = Math.min(a, b) + "-" + Math.max(a, b), s = d.scores[key];
    const flip = a > b;
    document.getElementById("resemblance").textContent = s ? pct(s[0]) : "n/a";
    document.getElementById("contain-ab").textContent = s ? pct(flip ? s[2] : s[1]) : "n/a";
    document.getElementById("contain-ba").textContent = s ? pct(flip ? s[1] : s[2]) : "n/a";
    document.getElementById("shared").textContent = s ? String(s[3]) : "n/a";
    const edge = d.edges[key];
    document.getElementById("rule").textContent = edge ? edge : (a === b ? "the same document" :
      "no verified link between these two: they are in one cluster through other members");
    history.replaceState(null, "", "#a=" + a + "&b=" + b);
  }
  pick.forEach(p => p.addEventListener("change", show));
  show();
}

window.addEventListener("DOMContentLoaded", () => {
  const d = data();
  if (d.page === "index") indexPage(d); else clusterPage(d);
});
"""
