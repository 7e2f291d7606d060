// reljac debug page, the panel's drawing (debug_page.js keeps the connection, the scene and the
// handles): the levels, the nearest collision pairs, the plots. Served in one script after
// debug_page.js, whose D, $, COLORS and PLOT_SECONDS it reads when called.
// Every name (task, joint, link) reaches the page as text, never as HTML: el() builds elements
// whose string children become text nodes.
function el(tag, attributes, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attributes || {})) {
    if (k === "class") e.className = v; else if (k === "title") e.title = v; else e.setAttribute(k, v);
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(typeof c === "string" ? document.createTextNode(c) : c);
  return e;
}

const fmt = (x, k, unit) => (x === null || x === undefined) ? "-" : (x * k).toFixed(1).replace(/^-(0\.0)$/, "$1") + unit;
// A distance to a bound in its row's unit (the error's: m shown in mm, rad in degrees).
const fmtBound = (x, unit) => unit === "m" ? fmt(x, 1e3, " mm") : unit === "rad" ? fmt(x, 180 / Math.PI, "°")
  : (x === null || x === undefined) ? "-" : x.toPrecision(3);

// A level's inequality rows: name, active (on a bound at the last step) or slack, distance of the
// error to its nearest bound (negative: beyond it).
function boundRows(rows) {
  const table = el("table", {class: "values bounds"});
  table.append(el("tr", {}, el("th", {class: "name"}, "inequality row"), el("th", {}, "state"),
                  el("th", {class: "num"}, "to bound")));
  for (const r of rows) {
    table.append(el("tr", {class: r.active ? "active-row" : "slack-row"}, el("td", {class: "name", title: r.name}, r.name),
                    el("td", {class: r.active ? "active" : "slack"}, r.active ? "active" : "slack"),
                    el("td", {class: "num"}, fmtBound(r.distance, r.unit))));
  }
  return table;
}

function drawLevels(levels) {
  const rows = [];
  for (const level of levels) {
    // a posture level is a regularization: not expected to be met, so never painted as a failure
    const unmet = level.met === false && !level.posture, scaled = level.scale !== null && level.scale < 1;
    const verdict = level.posture ? el("span", {class: "posture"}, level.met ? "met" : "posture (not expected to be met)")
      : el("span", {class: level.met ? "met" : "sat"}, level.met ? "met" : "not met");
    const head = el("div", {}, el("b", {}, `Level ${level.level}`), "  scale ",
      el("span", {class: scaled ? "scaled" : ""}, level.scale === null ? "-" : level.scale.toFixed(3)), "  ", verdict,
      `  residual ${level.residual === null ? "-" : level.residual.toExponential(1)}`);
    const table = el("table", {class: "values"});
    for (const task of level.tasks) {
      const e = task.errors;
      const cells = ("position" in e) ? [fmt(e.position, 1e3, " mm"), fmt(e.orientation, 180 / Math.PI, "°")] : [fmt(e.error, 1, ""), ""];
      table.append(el("tr", {}, el("td", {class: "name", title: task.name}, task.name),
                      ...cells.map((c) => el("td", {class: "num"}, c))));
    }
    const div = el("div", {class: "level" + (unmet ? " unmet" : "") + (level.posture ? " posture-level" : "")}, head, table);
    if (level.rows && level.rows.length) div.append(boundRows(level.rows));
    if (level.saturated_joints.length) div.append(el("div", {class: "sat"}, "joints: " + level.saturated_joints.join(", ")));
    if (level.limited_by) div.append(el("div", {class: "sat"}, "limited by: " + level.limited_by));
    if (level.saturated_constraints.length) div.append(el("div", {class: "sat"}, "constraints: " + level.saturated_constraints.join(", ")));
    rows.push(div);
  }
  $("levels").replaceChildren(...rows);
}

function drawPairs(pairs, minimum) {
  const row = (name, value) => el("tr", {}, el("td", {class: "name", title: name}, name), el("td", {class: "num"}, value));
  $("pairs").replaceChildren(...(pairs.length ? [row("smallest", fmt(minimum, 1e3, " mm"))]
    .concat(pairs.map((p) => row(p.pair, fmt(p.distance, 1e3, " mm")))) : [el("tr", {}, el("td", {}, "no pair within reach"))]));
}

// Axis labels that tell lo from hi: as many decimals as the range needs (sub-millimetre jitter
// on a 21 mm distance reads 21.0003 / 21.0007, not 21 / 21).
function decimals(lo, hi) {
  const span = Math.abs(hi - lo);
  return span > 0 && isFinite(span) ? Math.min(Math.max(Math.ceil(-Math.log10(span)) + 1, 0), 8) : 0;
}

// A plot: the curves on the left, the legend in a column of its own on the right (never over a
// curve), the axis labels of the top and bottom values at the left. D.plots[id] keeps the layout.
function plot(canvas, series, transform) {
  const ctx = canvas.getContext("2d");
  const w = canvas.width, h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  ctx.font = "10px sans-serif";
  const legend = Math.max(...series.map((s) => ctx.measureText(s.name).width), 0) + 8;
  const layout = D.plots[canvas.id] = {plotLeft: 0, plotRight: w - legend - 4, legendLeft: w - legend, labels: []};
  const points = series.flatMap((s) => s.points).filter((p) => p[1] !== null && isFinite(transform(p[1])));
  series.forEach((s, k) => { ctx.fillStyle = COLORS[k % COLORS.length]; ctx.fillText(s.name, layout.legendLeft + 2, 12 + 11 * k); });
  if (!points.length) { ctx.fillStyle = "#999"; ctx.fillText("no data", layout.plotRight / 2 - 20, h / 2); return; }
  const t1 = Math.max(...points.map((p) => p[0])), t0 = t1 - PLOT_SECONDS;
  let lo = Math.min(...points.map((p) => transform(p[1]))), hi = Math.max(...points.map((p) => transform(p[1])));
  if (hi - lo < 1e-12 * Math.max(1, Math.abs(hi))) { lo -= 1; hi += 1; }
  layout.labels = [series.label(hi, lo, hi), series.label(lo, lo, hi)];
  layout.plotLeft = Math.max(...layout.labels.map((l) => ctx.measureText(l).width)) + 6;
  const x = (t) => layout.plotLeft + (layout.plotRight - layout.plotLeft) * (t - t0) / (t1 - t0);
  const y = (v) => h - 12 - (h - 20) * (transform(v) - lo) / (hi - lo);
  ctx.fillStyle = "#666";
  ctx.fillText(layout.labels[0], 2, 10);
  ctx.fillText(layout.labels[1], 2, h - 12);
  series.forEach((s, k) => {
    ctx.strokeStyle = COLORS[k % COLORS.length];
    ctx.beginPath();
    let pen = false;
    for (const [t, v] of s.points) {
      if (v === null || !isFinite(transform(v))) { pen = false; continue; }
      if (pen) ctx.lineTo(x(t), y(v)); else ctx.moveTo(x(t), y(v));
      pen = true;
    }
    ctx.stroke();
  });
}

function drawPlots() {
  const levels = D.init ? D.init.levels.length : 0;
  const errors = [];
  for (let k = 0; k < levels; k++) {
    errors.push({name: "level " + k, points: D.samples.map((s) => [s[0], s[1][k] > 0 ? s[1][k] : null])});
  }
  errors.label = (v, lo, hi) => Math.pow(10, v).toExponential(Math.min(decimals(lo, hi), 3));
  plot($("errors"), errors, (v) => Math.log10(v));
  const distance = [{name: "min", points: D.samples.map((s) => [s[0], s[2] === null ? null : s[2] * 1e3])}];
  distance.label = (v, lo, hi) => v.toFixed(decimals(lo, hi));
  plot($("distance"), distance, (v) => v);
}
