"""The Teach page's step player: a batch of order-MCMC moves
(:func:`bnma_core.structure.teaching.step_frames`) played move by move in the browser, so that
"+1", "+10", "+100", Play and the slider cost the server nothing (DESIGN §14, §9).

One self-contained HTML page (no library, no network): the numbers of each move come from the
server's :class:`~bnma_core.structure.orders.MoveRecord`; the page only draws them. Per frame
it shows the iteration, the move drawn on the order (current order above, proposed order
below, the moved variables in orange, the kept row framed), the scores before and proposed
with their difference, the acceptance probability, the uniform draw and the decision, the
best network of the order reached (arcs new since the previous frame in orange), the trace of
the chain's log score with the end of the burn-in, and the last 10 moves as a table. Every
score is a natural-log order score, ln P(order, data), formatted one way (thousands
separators, one decimal).
"""

from __future__ import annotations

import html
import json

import networkx as nx

__all__ = ["step_player_html", "network_positions"]

SPEEDS = {"1 step every 2 s": (2000, 1), "1 step per second": (1000, 1),
          "5 steps per second": (200, 1), "20 steps per second": (50, 1)}
"""Play speeds: label -> (milliseconds between frames, moves per frame)."""
DEFAULT_SPEED = "1 step per second"


def network_positions(names: list[str], nets: list[list],
                      order: list[int] | None = None) -> dict[str, list[float]]:
    """Fixed positions of the variables for every best network of a batch, so that a
    variable stays in place while the arcs change: the layered drawing
    (:func:`bnma_core.viz.graphs.layered_drawing`, DESIGN §16) of the union of their arcs
    that agree with ``order`` (variable indices by position; all arcs when None), an acyclic
    graph. Pixels, y downwards."""
    from .graphs import layered_drawing

    rank = {v: p for p, v in enumerate(order)} if order is not None else None
    g = nx.DiGraph()
    g.add_nodes_from(names)
    for arcs in nets:
        g.add_edges_from((names[a], names[b]) for a, b in arcs
                         if rank is None or rank[a] < rank[b])
    d = layered_drawing(g, edge_weight=None)
    return {str(v): [float(x), float(d.height - y)] for v, (x, y) in d.positions.items()}


def step_player_html(frames: dict, next_batch_note: str = "") -> str:
    """The player page for one batch of moves.

    Parameters
    ----------
    frames : dict
        :func:`bnma_core.structure.teaching.step_frames`.
    next_batch_note : str
        Shown when the last move of the batch is reached (e.g. how to load the next moves).

    Returns
    -------
    str
        An HTML document (inline CSS, SVG and JavaScript; about 100 kB per 1,000 moves).
        Elements the tests and the load test read: ``#iteration`` (the "Iteration k of N"
        text), ``#decision`` ("accepted" / "rejected"), the buttons ``+1``, ``+10``,
        ``+100`` and ``Play``.
    """
    data = dict(frames)
    m = frames["moves"]
    last = next((o for o, a in zip(reversed(m["proposed_order"]), reversed(m["accepted"]))
                 if a), frames["order"])
    data["positions"] = network_positions(frames["names"], frames["nets"], last)
    data["speeds"] = SPEEDS
    data["note"] = next_batch_note
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")
    return _TEMPLATE.replace("__DATA__", payload).replace(
        "__SPEEDS__", "".join(f"<option{' selected' if s == DEFAULT_SPEED else ''}>"
                              f"{html.escape(s)}</option>" for s in SPEEDS))


_TEMPLATE = r"""<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body{font-family:"Source Sans Pro",sans-serif;margin:0;color:#31333f;font-size:15px}
.bar{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:4px 0 10px}
button{font:inherit;padding:4px 14px;border:1px solid #ccc;border-radius:8px;background:#fff;
 cursor:pointer}button:hover{border-color:#ff4b4b;color:#ff4b4b}
button:disabled{color:#aaa;border-color:#e6e6e6;cursor:default}
select{font:inherit;padding:3px}input[type=range]{flex:1;min-width:160px}
.metrics{display:grid;grid-template-columns:repeat(3,1fr);gap:6px 16px;margin-bottom:6px}
.metric .l{font-size:13px;color:#555}.metric .v{font-size:24px;line-height:1.3}
.metric .d{font-size:13px}.up{color:#09ab3b}.down{color:#ff2b2b}
.row{display:flex;gap:16px;flex-wrap:wrap}.row>div{flex:1;min-width:300px}
h4{margin:8px 0 2px;font-size:15px}.cap{font-size:13px;color:#555;margin:2px 0 8px}
table{border-collapse:collapse;font-size:13px;width:100%}
td,th{border-bottom:1px solid #e6e6e6;padding:2px 6px;text-align:right;white-space:nowrap}
th{font-weight:600;color:#555;white-space:normal;vertical-align:bottom}
td.t,th.t{text-align:left}.note{background:#e8f1fb;border-radius:8px;padding:8px 12px;
 margin:6px 0;font-size:14px}svg text{font-family:inherit}
</style></head><body>
<div class="bar">
 <button id="b1" title="Advance chain 0 by 1 iteration.">+1</button>
 <button id="b10" title="Advance chain 0 by 10 iterations.">+10</button>
 <button id="b100" title="Advance chain 0 by 100 iterations.">+100</button>
 <button id="play"
  title="Advance by itself at the chosen speed; press again to pause.">Play</button>
 <select id="speed" title="Play speed">__SPEEDS__</select>
 <input id="slider" type="range" min="0" value="0" aria-label="Iteration (slider)"
  title="Go to any iteration of these moves">
</div>
<div id="note" class="note" style="display:none"></div>
<div class="metrics">
 <div class="metric"><div class="l">Iteration</div><div class="v" id="iteration"></div></div>
 <div class="metric"><div class="l" title="The current order's log score (natural log).">
  ln P(order, data) before</div><div class="v" id="before"></div></div>
 <div class="metric">
  <div class="l" title="The proposed order's log score; below it the difference.">
  ln P(order, data) proposed</div><div class="v" id="proposed"></div>
  <div class="d" id="delta"></div></div>
 <div class="metric"><div class="l" title="min(1, P(proposed order | data) /
  P(current order | data)) = min(1, exp(proposed − before)).">Acceptance probability</div>
  <div class="v" id="accprob"></div></div>
 <div class="metric">
  <div class="l" title="The move is accepted when u &lt; the acceptance probability.">
  Uniform draw u</div><div class="v" id="uniform"></div></div>
 <div class="metric"><div class="l">Move</div><div class="v" id="decision"></div></div>
</div>
<h4 id="movetitle"></h4>
<svg id="order" width="100%" preserveAspectRatio="xMinYMin meet"></svg>
<div class="row">
 <div><h4>Best network of the current order</h4><svg id="net"
  preserveAspectRatio="xMinYMin meet" style="max-width:100%"></svg>
  <div class="cap" id="netcap"></div></div>
 <div><h4>ln P(order, data) of chain 0</h4><svg id="trace" width="100%"
  viewBox="0 0 420 280"></svg><div class="cap" id="tracecap"></div></div>
</div>
<h4>The last 10 moves</h4>
<table id="table"></table>
<script>
const D = __DATA__;
const M = D.moves, N = M.iteration.length, names = D.names;
const nf1 = new Intl.NumberFormat("en-US", {minimumFractionDigits: 1, maximumFractionDigits: 1});
const nf0 = new Intl.NumberFormat("en-US", {maximumFractionDigits: 0});
const minus = s => s.replace("-", "\u2212");
const f1 = x => minus(nf1.format(x));
const f4 = x => x.toFixed(4);
const esc = s => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const $ = id => document.getElementById(id);
const SVGNS = "http://www.w3.org/2000/svg";
function el(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
// the order before each move and the score after it (read from the server's records)
const before = [], scoreAfter = [];
let cur = D.order.slice();
for (let k = 0; k < N; k++) {
  before.push(cur);
  if (M.accepted[k]) cur = M.proposed_order[k];
  scoreAfter.push(M.accepted[k] ? M.proposed_log_score[k] : M.log_score[k]);
}
let pos = 0, timer = null;
const slider = $("slider");
slider.max = N;
function drawOrder(k) {
  const svg = $("order"); svg.innerHTML = "";
  const longest = Math.max(...names.map(s => s.length));
  const bw = Math.max(58, 9 * longest + 14), gap = 8, left = 132, n = names.length;
  const W = left + n * (bw + gap) + 10, H = 118;
  svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
  svg.setAttribute("height", H);
  const order = k < 0 ? (pos ? before[pos - 1] : D.order) : before[k];
  const prop = k < 0 ? order : M.proposed_order[k];
  const moved = k < 0 ? [] : M.nodes[k];
  const acc = k >= 0 && M.accepted[k];
  const rows = [[20, order, "current order", !acc], [80, prop, "proposed order", acc]];
  const defs = el("defs", {});
  const mk = el("marker", {id: "ah", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7,
                           markerHeight: 7, orient: "auto-start-reverse"});
  mk.appendChild(el("path", {d: "M0,0L10,5L0,10z", fill: "#e8590c"}));
  defs.appendChild(mk); svg.appendChild(defs);
  for (const [y, seq, label, kept] of rows) {
    if (k < 0 && y === 80) continue;
    svg.appendChild(el("text", {x: left - 10, y: y + 5, "text-anchor": "end",
      "font-size": 13, "font-weight": kept ? "bold" : "normal"}, label));
    seq.forEach((v, p) => {
      const x = left + p * (bw + gap), hot = moved.includes(v);
      svg.appendChild(el("rect", {x: x, y: y - 13, width: bw, height: 26, rx: 4,
        fill: hot ? "#e8590c" : "#dbe4ff", stroke: kept ? "#222" : "#adb5bd",
        "stroke-width": kept ? 2 : 1}));
      svg.appendChild(el("text", {x: x + bw / 2, y: y + 5, "text-anchor": "middle",
        "font-size": 13, fill: hot ? "white" : "#222"}, names[v]));
    });
  }
  for (const v of moved) {
    const a = order.indexOf(v), b = prop.indexOf(v);
    svg.appendChild(el("line", {x1: left + a * (bw + gap) + bw / 2, y1: 34,
      x2: left + b * (bw + gap) + bw / 2, y2: 65, stroke: "#e8590c", "stroke-width": 2,
      "marker-end": "url(#ah)"}));
  }
}
function drawNet(k) {
  const svg = $("net"); svg.innerHTML = "";
  const P = D.positions, xs = Object.values(P).map(p => p[0]), ys = Object.values(P).map(p => p[1]);
  const pad = 40, W = Math.max(...xs) + 2 * pad, H = Math.max(...ys) + 2 * pad;
  svg.setAttribute("viewBox", `${-pad} ${-pad} ${W} ${H}`);
  svg.setAttribute("height", H); svg.setAttribute("width", W);
  const net = k < 0 ? D.net0 : M.net[k];
  const prev = k <= 0 ? D.net0 : M.net[k - 1];
  const had = new Set(D.nets[prev].map(a => a.join(",")));
  const defs = el("defs", {});
  for (const [id, c] of [["an", "#555"], ["ao", "#e8590c"]]) {
    const m = el("marker", {id: id, viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 7,
                            markerHeight: 7, orient: "auto"});
    m.appendChild(el("path", {d: "M0,0L10,5L0,10z", fill: c}));
    defs.appendChild(m);
  }
  svg.appendChild(defs);
  const r = 9;
  for (const [a, b] of D.nets[net]) {
    const [x1, y1] = P[names[a]], [x2, y2] = P[names[b]];
    const L = Math.hypot(x2 - x1, y2 - y1) || 1, ux = (x2 - x1) / L, uy = (y2 - y1) / L;
    const fresh = !had.has(a + "," + b);
    svg.appendChild(el("line", {x1: x1 + r * ux, y1: y1 + r * uy, x2: x2 - r * ux,
      y2: y2 - r * uy, stroke: fresh ? "#e8590c" : "#555", "stroke-width": fresh ? 2.5 : 1.5,
      "marker-end": fresh ? "url(#ao)" : "url(#an)"}));
  }
  names.forEach(v => {
    const [x, y] = P[v], cls = v === D.class_name;
    svg.appendChild(el("circle", {cx: x, cy: y, r: r, fill: cls ? "#ffd43b" : "#dbe4ff",
                                  stroke: "#333"}));
    // a white halo: an arc that passes behind a label leaves it readable
    const t = el("text", {x: x, y: y - 13, "text-anchor": "middle", "font-size": 13,
                          stroke: "white", "stroke-width": 3, "paint-order": "stroke"}, v);
    svg.appendChild(t);
  });
  const newArcs = D.nets[net].filter(a => !had.has(a.join(",")));
  $("netcap").textContent = "Each variable takes its best parent set among the variables " +
    "before it in the order. Yellow: the class (" + D.class_name + "). " +
    (newArcs.length ? "Orange: arcs new with this move (" +
     newArcs.map(a => names[a[0]] + " \u2192 " + names[a[1]]).join(", ") + ")." :
     "No arc changed with this move.");
}
function niceTicks(lo, hi, n) {
  const span = hi - lo || 1, raw = span / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(s => s * mag).find(s => s >= raw);
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi + 1e-9; t += step) out.push(t);
  // the decimals the step needs and no more: "-2,305", "-2,301.5" (the figures' format)
  const fmt = new Intl.NumberFormat("en-US", {maximumFractionDigits:
    Math.max(0, -Math.floor(Math.log10(step) + 1e-9))});
  return out.map(t => [t, minus(fmt.format(t))]);
}
function drawTrace() {
  const svg = $("trace"); svg.innerHTML = "";
  const xs = D.history.map(h => h[0]), ys = D.history.map(h => h[1]);
  for (let k = 0; k < pos; k++) { xs.push(M.iteration[k]); ys.push(scoreAfter[k]); }
  const L = 74, R = 410, T = 12, B = 228;
  const xmax = Math.max(10, xs[xs.length - 1]);
  let ylo = Math.min(...ys), yhi = Math.max(...ys);
  if (yhi - ylo < 1) { ylo -= 0.5; yhi += 0.5; }
  const pad = (yhi - ylo) * 0.05; ylo -= pad; yhi += pad;
  const X = x => L + (R - L) * x / xmax, Y = y => B - (B - T) * (y - ylo) / (yhi - ylo);
  for (const [t, label] of niceTicks(ylo, yhi, 5)) {
    svg.appendChild(el("line", {x1: L, x2: R, y1: Y(t), y2: Y(t), stroke: "#eee"}));
    svg.appendChild(el("text", {x: L - 6, y: Y(t) + 4, "text-anchor": "end", "font-size": 13},
                       label));
  }
  for (const [t, label] of niceTicks(0, xmax, 5)) {
    svg.appendChild(el("text", {x: X(t), y: B + 17, "text-anchor": "middle", "font-size": 13},
                       label));
  }
  svg.appendChild(el("line", {x1: L, x2: R, y1: B, y2: B, stroke: "#888"}));
  svg.appendChild(el("line", {x1: L, x2: L, y1: T, y2: B, stroke: "#888"}));
  svg.appendChild(el("text", {x: (L + R) / 2, y: B + 40, "text-anchor": "middle",
                              "font-size": 14}, "iteration"));
  svg.appendChild(el("text", {x: 14, y: (T + B) / 2, "text-anchor": "middle", "font-size": 14,
    transform: `rotate(-90 14 ${(T + B) / 2})`}, "ln P(order, data)"));
  if (D.burn_in <= xmax) {
    svg.appendChild(el("line", {x1: X(D.burn_in), x2: X(D.burn_in), y1: T, y2: B,
                                stroke: "#888", "stroke-dasharray": "3,3"}));
    svg.appendChild(el("text", {x: X(D.burn_in) + 4, y: T + 12, "font-size": 12,
                                fill: "#555"}, "end of burn-in"));
  }
  const pts = xs.map((x, q) => X(x).toFixed(1) + "," + Y(ys[q]).toFixed(1)).join(" ");
  svg.appendChild(el("polyline", {points: pts, fill: "none", stroke: "#1c7ed6",
                                  "stroke-width": 1.5}));
}
function drawTable() {
  const t = $("table");
  let h = "<tr><th>Iteration</th><th class='t'>Move</th><th class='t'>Variables moved</th>" +
    "<th>ln P before</th><th>ln P proposed</th><th>Acceptance probability</th>" +
    "<th>Uniform draw u</th><th class='t'>Accepted</th></tr>";
  for (let k = Math.max(0, pos - 10); k < pos; k++) {
    const what = M.kind[k] === "swap" ? `swap ${M.i[k] + 1} \u2194 ${M.j[k] + 1}` :
      `${M.i[k] + 1} \u2192 ${M.j[k] + 1}`;
    h += `<tr><td>${nf0.format(M.iteration[k])}</td><td class='t'>${what}</td>` +
      `<td class='t'>${M.nodes[k].map(v => esc(names[v])).join(", ")}</td>` +
      `<td>${f1(M.log_score[k])}</td><td>${f1(M.proposed_log_score[k])}</td>` +
      `<td>${f4(M.acceptance_probability[k])}</td><td>${f4(M.uniform[k])}</td>` +
      `<td class='t'>${M.accepted[k] ? "yes" : "no"}</td></tr>`;
  }
  t.innerHTML = pos ? h : "";
}
function show() {
  const k = pos - 1, it = pos ? M.iteration[k] : D.start;
  $("iteration").textContent = nf0.format(it) + " of " + nf0.format(D.n_iter);
  slider.value = pos;
  for (const [id, s] of [["b1", 1], ["b10", 10], ["b100", 100]]) $(id).disabled = pos >= N;
  $("play").disabled = pos >= N && !timer;
  if (k < 0) {
    for (const id of ["before", "proposed", "delta", "accprob", "uniform", "decision"])
      $(id).textContent = "";
    $("before").textContent = f1(D.score);
    $("movetitle").textContent = "Press +1 to propose the " + (D.start ? "next" : "first") +
      " move.";
  } else {
    const d = M.log_ratio[k];
    $("before").textContent = f1(M.log_score[k]);
    $("proposed").textContent = f1(M.proposed_log_score[k]);
    $("delta").textContent = (d >= 0 ? "\u2191 +" : "\u2193 \u2212") + Math.abs(d).toFixed(2);
    $("delta").className = "d " + (d >= 0 ? "up" : "down");
    $("accprob").textContent = f4(M.acceptance_probability[k]);
    $("uniform").textContent = f4(M.uniform[k]);
    $("decision").textContent = M.accepted[k] ? "accepted" : "rejected";
    const what = M.kind[k] === "swap" ? `swap of positions ${M.i[k] + 1} and ${M.j[k] + 1}` :
      `move of the variable at position ${M.i[k] + 1} to ${M.j[k] + 1}`;
    $("movetitle").textContent = `Iteration ${nf0.format(M.iteration[k])}: ${what}, ` +
      (M.accepted[k] ? "accepted" : "rejected (the chain stays)");
  }
  drawOrder(k); drawNet(k); drawTrace(); drawTable();
  let acc = 0; for (let q = 0; q < pos; q++) acc += M.accepted[q] ? 1 : 0;
  $("tracecap").textContent = pos ? `Accepted ${acc} of the ${pos} moves shown ` +
    `(${(100 * acc / pos).toFixed(1)} %).` : "";
  const end = pos >= N, note = $("note");
  note.style.display = end ? "block" : "none";
  note.textContent = it >= D.n_iter ? `Chain 0 has done all its ${nf0.format(D.n_iter)} ` +
    "iterations." : D.note;
}
function advance(k) { pos = Math.min(N, pos + k); show(); if (pos >= N) stop(); }
function stop() {
  if (timer) clearInterval(timer);
  timer = null; $("play").textContent = "Play"; show();
}
$("b1").onclick = () => advance(1);
$("b10").onclick = () => advance(10);
$("b100").onclick = () => advance(100);
slider.oninput = () => { pos = +slider.value; show(); };
$("play").onclick = () => {
  if (timer) { stop(); return; }
  const [ms, per] = D.speeds[$("speed").value];
  $("play").textContent = "Pause";
  timer = setInterval(() => advance(per), ms);
  advance(per);
};
$("speed").onchange = () => { if (timer) { stop(); $("play").click(); } };
show();
</script></body></html>
"""
