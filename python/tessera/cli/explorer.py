"""The IR explorer: one self-contained HTML page showing a kernel after every pass.

The page needs no server and no network: the programs, the line diffs (computed here with
difflib) and the script that draws them are all inside the file. It shows the pipeline's
passes grouped by stage, each with its time and whether it changed the program; selecting a
pass shows the program before and after it side by side with changed lines highlighted; the
last entry is the generated source. ``page.html#tir.FlattenBuffer`` opens at that pass. Keys: j/k or the arrow keys move between passes, n/p
between changed passes, 1-9 jump to a stage.
"""

from __future__ import annotations

import difflib
import html
import json
from typing import Dict, List

from .kernels import Lowering


def _diff_ops(before: List[str], after: List[str]) -> List[list]:
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    return [list(op) for op in matcher.get_opcodes()]


def page_data(lowering: Lowering) -> Dict:
    """The JSON the page is drawn from: distinct texts once, passes refer to them by index."""
    texts: List[List[str]] = []
    index_of: Dict[str, int] = {}

    def intern(text: str) -> int:
        if text not in index_of:
            index_of[text] = len(texts)
            texts.append(text.splitlines())
        return index_of[text]

    passes = []
    previous = None
    for step in lowering.steps:
        after = intern(step.text)
        before = after if previous is None else previous
        entry = {
            "index": step.index,
            "stage": step.stage,
            "name": step.name,
            "ms": round(step.seconds * 1e3, 4),
            "changed": step.changed,
            "skipped": step.skipped,
            "before": before,
            "after": after,
            "ops": [] if before == after else _diff_ops(texts[before], texts[after]),
        }
        passes.append(entry)
        previous = after
    return {
        "kernel": lowering.kernel.name,
        "dialect": lowering.kernel.dialect,
        "file": lowering.kernel.path,
        "target": lowering.target,
        "texts": texts,
        "passes": passes,
        "source_name": lowering.source_name,
        "source": lowering.source,
        "total_ms": round(sum(s.seconds for s in lowering.steps) * 1e3, 3),
    }


_CSS = """
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.4 system-ui, sans-serif; color: #1d232a; background: #f6f7f9;
       display: grid; grid-template-columns: 300px 1fr; grid-template-rows: auto 1fr; height: 100vh; }
header { grid-column: 1 / 3; padding: 8px 14px; background: #22303c; color: #fff;
         display: flex; gap: 18px; align-items: center; }
header h1 { font-size: 15px; margin: 0; font-weight: 600; }
header .meta { opacity: .8; }
header select, header label { font: inherit; }
nav { overflow: auto; border-right: 1px solid #d5d9de; background: #fff; }
nav h2 { font-size: 11px; text-transform: uppercase; letter-spacing: .06em; color: #5b6670;
         margin: 10px 10px 2px; }
nav .pass { display: grid; grid-template-columns: minmax(0, 1fr) auto; gap: 6px; padding: 3px 10px 3px 14px;
            cursor: pointer; border-left: 3px solid transparent; }
nav .pass .nm { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
nav .pass:hover { background: #eef2f6; }
nav .pass.sel { background: #dde8f4; border-left-color: #2f6db5; }
nav .pass.changed .nm::before { content: "\\25CF  "; color: #d9822b; }
nav .pass.same .nm { color: #7b8590; }
nav .pass.skipped .nm { color: #aab2ba; text-decoration: line-through; }
nav .ms { color: #5b6670; font-variant-numeric: tabular-nums; }
main { overflow: auto; padding: 10px 14px; }
main h3 { margin: 4px 0 8px; font-size: 14px; }
table.diff { border-collapse: collapse; width: 100%; table-layout: fixed;
             font: 12px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #fff; }
table.diff td { padding: 0 6px; white-space: pre; overflow: hidden; text-overflow: ellipsis;
                vertical-align: top; }
table.diff td.ln { width: 44px; color: #9aa3ab; text-align: right; user-select: none;
                   border-right: 1px solid #e3e6e9; }
table.diff tr.del td.l, table.diff tr.rep td.l { background: #fde2e1; }
table.diff tr.ins td.r, table.diff tr.rep td.r { background: #dcf5e0; }
table.diff th { text-align: left; padding: 4px 6px; background: #eceff2; font-weight: 600; }
pre.src { background: #fff; padding: 8px; border: 1px solid #e3e6e9;
          font: 12px/1.35 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.note { color: #5b6670; margin: 0 0 8px; }
"""

_JS = r"""
(function () {
  "use strict";
  const D = JSON.parse(document.getElementById("tessera-data").textContent);
  const nav = document.getElementById("passes");
  const view = document.getElementById("view");
  const stageSel = document.getElementById("stage");
  const onlyChanged = document.getElementById("only-changed");
  const items = [];          // {kind: "pass"|"source", i, el}
  let current = 0;

  function esc(s) {
    return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  function row(cls, ln, l, rn, r) {
    return "<tr class='" + cls + "'><td class='ln'>" + ln + "</td><td class='l'>" + esc(l) +
           "</td><td class='ln'>" + rn + "</td><td class='r'>" + esc(r) + "</td></tr>";
  }
  function diffTable(p) {
    const a = D.texts[p.before], b = D.texts[p.after];
    const out = ["<table class='diff'><colgroup><col style='width:44px'><col>" +
                 "<col style='width:44px'><col></colgroup>"];
    out.push("<tr><th colspan='2'>before " + esc(p.index ? D.passes[p.index - 1].name : "") +
             "</th><th colspan='2'>after " + esc(p.name) + "</th></tr>");
    const ops = p.ops.length ? p.ops : [["equal", 0, a.length, 0, b.length]];
    for (const [tag, i1, i2, j1, j2] of ops) {
      const n = Math.max(i2 - i1, j2 - j1);
      for (let k = 0; k < n; k++) {
        const i = i1 + k, j = j1 + k;
        const hasL = i < i2, hasR = j < j2;
        const cls = tag === "equal" ? "eq" : tag === "delete" ? "del" : tag === "insert" ? "ins" : "rep";
        out.push(row(cls, hasL ? i + 1 : "", hasL ? a[i] : "", hasR ? j + 1 : "", hasR ? b[j] : ""));
      }
    }
    out.push("</table>");
    return out.join("");
  }
  function show(k) {
    if (k < 0 || k >= items.length) return;
    if (items[current]) items[current].el.classList.remove("sel");
    current = k;
    const it = items[k];
    it.el.classList.add("sel");
    it.el.scrollIntoView({block: "nearest"});
    if (it.kind === "source") {
      view.innerHTML = "<h3>generated source: " + esc(D.source_name) + "</h3><pre class='src'>" +
                       esc(D.source) + "</pre>";
    } else {
      const p = D.passes[it.i];
      let note;
      if (p.index === 0) note = "the program as written";
      else if (p.skipped) note = "skipped (disabled or below the optimisation level)";
      else note = (p.changed ? "changed the program" : "left the program unchanged") +
                  " in " + p.ms.toFixed(3) + " ms";
      view.innerHTML = "<h3>" + esc(p.stage) + " / " + esc(p.name) + "</h3><p class='note'>" +
                       note + "</p>" + diffTable(p);
    }
    stageSel.value = it.kind === "source" ? "source" : D.passes[it.i].stage;
  }
  function visible(k) { return items[k].el.style.display !== "none"; }
  function step(dir, changedOnly) {
    for (let k = current + dir; k >= 0 && k < items.length; k += dir) {
      if (!visible(k)) continue;
      if (changedOnly && items[k].kind === "pass" && !D.passes[items[k].i].changed) continue;
      show(k); return;
    }
  }
  function build() {
    let stage = null;
    const stages = [];
    D.passes.forEach(function (p, i) {
      if (p.stage !== stage) {
        stage = p.stage; stages.push(stage);
        const h = document.createElement("h2"); h.textContent = stage; nav.appendChild(h);
      }
      const el = document.createElement("div");
      el.className = "pass " + (p.skipped ? "skipped" : p.changed ? "changed" : p.index ? "same" : "");
      el.dataset.stage = p.stage;
      el.title = p.stage + " / " + p.name;
      el.innerHTML = "<span class='nm'>" + esc(p.name) + "</span><span class='ms'>" +
                     (p.index ? p.ms.toFixed(3) + " ms" : "") + "</span>";
      const k = items.length;
      el.addEventListener("click", function () { show(k); });
      nav.appendChild(el);
      items.push({kind: "pass", i: i, el: el});
    });
    if (D.source) {
      const h = document.createElement("h2"); h.textContent = "codegen"; nav.appendChild(h);
      const el = document.createElement("div");
      el.className = "pass changed"; el.dataset.stage = "source";
      el.innerHTML = "<span class='nm'>" + esc(D.source_name) + "</span><span class='ms'></span>";
      const k = items.length;
      el.addEventListener("click", function () { show(k); });
      nav.appendChild(el);
      items.push({kind: "source", i: -1, el: el});
      stages.push("source");
    }
    stages.forEach(function (s) {
      const o = document.createElement("option"); o.value = s; o.textContent = s; stageSel.appendChild(o);
    });
    stageSel.addEventListener("change", function () {
      for (let k = 0; k < items.length; k++) {
        if (items[k].el.dataset.stage === stageSel.value) { show(k); return; }
      }
    });
    onlyChanged.addEventListener("change", function () {
      items.forEach(function (it) {
        const p = it.kind === "pass" ? D.passes[it.i] : null;
        it.el.style.display = onlyChanged.checked && p && p.index && !p.changed ? "none" : "";
      });
    });
    document.addEventListener("keydown", function (e) {
      if (e.target.tagName === "SELECT" || e.target.tagName === "INPUT") return;
      if (e.key === "j" || e.key === "ArrowDown") { step(1, false); e.preventDefault(); }
      else if (e.key === "k" || e.key === "ArrowUp") { step(-1, false); e.preventDefault(); }
      else if (e.key === "n") step(1, true);
      else if (e.key === "p") step(-1, true);
      else if (/^[1-9]$/.test(e.key) && stages[+e.key - 1]) {
        stageSel.value = stages[+e.key - 1]; stageSel.dispatchEvent(new Event("change"));
      }
    });
    // page.html#tir.FlattenBuffer opens at that pass; otherwise the first one that changed.
    const wanted = decodeURIComponent(location.hash.slice(1));
    let start = wanted ? D.passes.findIndex(function (p) { return p.name === wanted; }) : -1;
    if (start < 0) start = D.passes.findIndex(function (p) { return p.changed; });
    show(start > 0 ? start : 0);
    document.body.dataset.passes = String(D.passes.length - 1);
    document.body.dataset.ready = "1";
  }
  window.addEventListener("error", function (e) { document.body.dataset.error = String(e.message); });
  build();
})();
"""


def render(lowering: Lowering) -> str:
    """The explorer page for ``lowering``, as one HTML document."""
    data = page_data(lowering)
    # "<" only occurs inside JSON strings; escaped, no "</script>" or "<!--" can end the element.
    payload = json.dumps(data).replace("<", "\\u003c")
    title = f"tessera explorer: {lowering.kernel.name} ({lowering.target})"
    changed = sum(1 for s in lowering.steps[1:] if s.changed)
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"<header><h1>{html.escape(lowering.kernel.name)}</h1>"
        f"<span class='meta'>{html.escape(lowering.kernel.dialect)} kernel &middot; target "
        f"{html.escape(lowering.target)} &middot; {len(lowering.steps) - 1} passes, {changed} changed "
        f"&middot; {data['total_ms']:.3f} ms</span>"
        "<label>stage <select id='stage'></select></label>"
        "<label><input type='checkbox' id='only-changed'> changed passes only</label>"
        "<span class='meta'>j/k: next/previous &middot; n/p: next/previous change</span></header>"
        "<nav id='passes'></nav><main id='view'></main>"
        f"<script type='application/json' id='tessera-data'>{payload}</script>"
        f"<script>{_JS}</script></body></html>\n"
    )
