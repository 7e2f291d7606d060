// reljac debug page: meshcat's viewer for the scene (relayed on /scene), and on /control the
// debugger's state in, the page's requests out (grab / drag / release a handle, pause, resume,
// step, reset, scrub, joint, export). Handles are drawn by Python (reljac/viz/debug_overlays.py);
// this script only finds their parts on the screen and turns a drag into a rigid motion Delta
// of the handle, in the handle's own frame, relative to its pose when grabbed.
"use strict";
const THREE = MeshCat.THREE;
// A browser drawing WebGL in software (SwiftShader, llvmpipe: no GPU) pays for every pixel and
// every vertex on the CPU: there the scene is drawn without antialiasing (which costs 2x) on at
// most SOFTWARE_PIXELS pixels, stretched to the view, with fewer triangles (coarsen below): one
// TIAGo frame 520-810 ms -> 56-132 ms. With a GPU it is meshcat's (antialiased, at the screen's
// pixel ratio); ?quality=full forces the latter.
const SOFTWARE_PIXELS = 250000;
function webglRenderer() {
  const gl = document.createElement("canvas").getContext("webgl");
  if (!gl) return "";
  const info = gl.getExtension("WEBGL_debug_renderer_info");
  const name = String(gl.getParameter(info ? info.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
  const lose = gl.getExtension("WEBGL_lose_context");
  if (lose) lose.loseContext();
  return name;
}
const GL_RENDERER = webglRenderer();
const SOFTWARE = /swiftshader|llvmpipe|softpipe|software/i.test(GL_RENDERER) &&
  new URLSearchParams(location.search).get("quality") !== "full";
const renderer = new THREE.WebGLRenderer({antialias: !SOFTWARE, alpha: true});
document.getElementById("scene").appendChild(renderer.domElement);
var viewer = new MeshCat.Viewer(document.getElementById("scene"), true, renderer);
viewer.connect("ws://" + location.host + "/scene");
viewer.renderer.shadowMap.enabled = false;  // a frame costs a third as much in a software-drawn browser
const meshcatPaneSize = viewer.set_3d_pane_size.bind(viewer);
viewer.set_3d_pane_size = (w, h) => {  // in software, fewer pixels than the view has
  const width = w === undefined ? viewer.dom_element.offsetWidth : w, height = h === undefined ? window.innerHeight : h;
  const ratio = window.devicePixelRatio || 1;
  viewer.renderer.setPixelRatio(SOFTWARE ? Math.min(ratio, Math.sqrt(SOFTWARE_PIXELS / Math.max(width * height, 1))) : ratio);
  meshcatPaneSize(width, height);
};
viewer.set_3d_pane_size();
// Frames of the scene drawn in the last second (meshcat draws on the animation frame after a change).
// While the robot's meshes load, the scene is drawn at most once a LOADING_DRAW [ms] (in software a
// drawing of a half-loaded Baxter took 0.3 s, after each of its 38 meshes): the loading goes on.
const LOADING_DRAW = 1000;
const meshcatRender = viewer.render.bind(viewer), renders = [];
let lastDrawn = 0;
viewer.render = () => {
  const now0 = performance.now(), loading = window.reljacDebug && window.reljacDebug.loading;
  if (loading && loading.drawn < loading.of && now0 - lastDrawn < LOADING_DRAW) return;  // still dirty: drawn later
  lastDrawn = now0;
  meshcatRender();
  if (typeof placeHandleLabels === "function") placeHandleLabels();
  const now = performance.now();
  renders.push(now);
  while (renders.length && now - renders[0] > 1000) renders.shift();
  D.fps = renders.length;
};
// Transforms of the nodes the debugger moves come on /control, batched (debug_server.py's
// TransformRelay); the meshcat server's copies of them, replayed on /scene, are older: skipped.
const relayed = new Set();
const meshcatCommand = viewer.handle_command.bind(viewer);
const drawn = new Set();  // the nodes whose object the page has handled (loading: showLoading)
viewer.handle_command = (cmd) => {
  if (cmd.type === "set_transform" && relayed.has(cmd.path)) return;
  meshcatCommand(cmd);
  if (SOFTWARE && cmd.type === "set_object") coarsen(viewer.scene_tree.find(cmd.path.split("/").filter((x) => x.length)).object);
  if (cmd.type === "set_object") { drawn.add(cmd.path); showLoading(); }
};
// While the robot's meshes arrive (init's "scene": each visual geometry's node path, name and
// bytes), the scene says so: how many are drawn, how many bytes of how many, which is next.
const MB = (bytes) => (bytes / 1e6).toFixed(1);
function showLoading() {
  const box = document.getElementById("loading"), dbg = window.reljacDebug;  // (D: once the script ran)
  if (!box || !dbg || !dbg.init || !dbg.init.scene) return;
  const all = dbg.init.scene, done = all.filter((o) => drawn.has(o.path)), sum = (list) => list.reduce((s, o) => s + o.bytes, 0);
  dbg.loading = {drawn: done.length, of: all.length, bytes: sum(done), total: sum(all), seconds: null};
  if (done.length === all.length) {
    dbg.loading.seconds = dbg.loaded = dbg.loaded || (performance.now() - dbg.opened) / 1000;
    box.style.display = "none";
    return;
  }
  const next = all.find((o) => !drawn.has(o.path));
  box.style.display = "";
  box.textContent = `loading the robot's meshes: ${done.length} of ${all.length} drawn ` +
    `(${MB(sum(done))} of ${MB(sum(all))} MB); next: ${next.name}`;
}
// In software, drawing time goes with the triangles: round shapes get fewer (on TIAGo the
// collision overlay's balls were a fifth of the scene's 200k triangles) and meshes are simplified
// by vertex clustering (the vertices in one cell of a grid of MESH_CELLS cells along the mesh's
// longest side merge; triangles left with less than three corners go), drawn flat-shaded.
const SOFTWARE_SEGMENTS = {SphereGeometry: [12, 8], CylinderGeometry: [16, 1]};
const MESH_CELLS = 40, MESH_KEEP = 1000;  // meshes of fewer triangles are kept as they are

// Every attribute but the normals (colours, texture coordinates) is averaged over a cluster like
// the positions, and the geometry's groups (a mesh of several materials draws one group per
// material, and nothing of a geometry without groups) are kept, each simplified on its own.
const component = (a, v, i) => a.isInterleavedBufferAttribute ? a.data.array[v * a.data.stride + a.offset + i]
  : a.array[v * a.itemSize + i];  // (this three.js has no BufferAttribute.getComponent)
function simplify(g) {
  const pos = g.attributes.position, index = g.index ? g.index.array : null;
  const corners = index ? index.length : pos.count;
  if (corners / 3 < MESH_KEEP) return null;
  g.computeBoundingBox();
  const lo = g.boundingBox.min, size = new THREE.Vector3();
  g.boundingBox.getSize(size);
  const cell = Math.max(size.x, size.y, size.z) / MESH_CELLS || 1, n = MESH_CELLS + 1;
  const names = Object.keys(g.attributes).filter((name) => name !== "normal");
  const clusters = new Map(), of = new Int32Array(pos.count), counts = [];
  const sums = Object.fromEntries(names.map((name) => [name, []]));
  for (let v = 0; v < pos.count; v++) {
    const key = (Math.floor((pos.getX(v) - lo.x) / cell) * n + Math.floor((pos.getY(v) - lo.y) / cell)) * n +
      Math.floor((pos.getZ(v) - lo.z) / cell);
    let c = clusters.get(key);
    if (c === undefined) {
      c = counts.length; clusters.set(key, c); counts.push(0);
      for (const name of names) for (let i = 0; i < g.attributes[name].itemSize; i++) sums[name].push(0);
    }
    counts[c]++;
    for (const name of names) {
      const a = g.attributes[name], k = a.itemSize;
      for (let i = 0; i < k; i++) sums[name][k * c + i] += component(a, v, i);
    }
    of[v] = c;
  }
  const out = Object.fromEntries(names.map((name) => [name, []]));
  const groups = g.groups.length ? g.groups : [{start: 0, count: corners, materialIndex: 0}], kept = [];
  for (const group of groups) {
    const first = out.position.length / 3, end = Math.min(group.start + group.count, corners);
    for (let k = group.start; k + 2 < end; k += 3) {
      const a = of[index ? index[k] : k], b = of[index ? index[k + 1] : k + 1], c = of[index ? index[k + 2] : k + 2];
      if (a === b || b === c || a === c) continue;
      for (const name of names) {
        const size = g.attributes[name].itemSize;
        for (const j of [a, b, c]) for (let i = 0; i < size; i++) out[name].push(sums[name][size * j + i] / counts[j]);
      }
    }
    kept.push({start: first, count: out.position.length / 3 - first, materialIndex: group.materialIndex});
  }
  const simple = new THREE.BufferGeometry();
  for (const name of names) {
    simple.setAttribute(name, new THREE.Float32BufferAttribute(out[name], g.attributes[name].itemSize,
                                                               g.attributes[name].normalized));
  }
  if (g.groups.length) for (const group of kept) simple.addGroup(group.start, group.count, group.materialIndex);
  simple.computeVertexNormals();  // not indexed: each triangle its own normal (flat)
  D.simplified.before += corners / 3;
  D.simplified.after += out.position.length / 9;
  return simple;
}
function coarsen(root) {
  root.traverse((o) => {
    const g = o.geometry, segments = g && SOFTWARE_SEGMENTS[g.type];
    if (o.isMesh && g && g.type === "BufferGeometry" && g.attributes.position) {
      const simple = simplify(g);
      if (simple) { o.geometry = simple; g.dispose(); }
      return;
    }
    if (!segments) return;
    const p = g.parameters;
    if (g.type === "SphereGeometry" && p.widthSegments > segments[0]) {
      o.geometry = new THREE.SphereGeometry(p.radius, segments[0], segments[1], p.phiStart, p.phiLength, p.thetaStart, p.thetaLength);
    } else if (g.type === "CylinderGeometry" && p.radialSegments > segments[0]) {
      o.geometry = new THREE.CylinderGeometry(p.radiusTop, p.radiusBottom, p.height, segments[0], p.heightSegments,
                                              p.openEnded, p.thetaStart, p.thetaLength);
    } else return;
    g.dispose();
  });
}
const D = window.reljacDebug = {opened: performance.now(), loading: null, loaded: null, software: SOFTWARE, simplified: {before: 0, after: 0}, glRenderer: GL_RENDERER, init: null, state: null, received: 0, sent: 0, drag: null, drags: 0, transforms: 0, arrivals: [], rate: 0, fps: 0,
                                exported: null, samples: [], plots: {}};
const PICK_PX = 8;  // how near the pointer must be to an arrow or ring [px]
let PLOT_SECONDS = 10, PLOT_RATE = 30;  // [s], [1/s]: the debugger's (init's "plot")
const COLORS = ["#1565c0", "#ef6c00", "#2e7d32", "#6a1b9a", "#c62828", "#00838f"];
const $ = (id) => document.getElementById(id);
const control = new WebSocket("ws://" + location.host + "/control");
function send(message) {
  if (control.readyState === 1) { control.send(JSON.stringify(message)); D.sent++; }
}
control.onmessage = (event) => {
  const m = JSON.parse(event.data);
  D.received++;
  if (m.type === "transforms") {
    for (const [path, matrix] of m.items) {
      relayed.add(path);
      viewer.set_transform(path.split("/").filter((x) => x.length), matrix);
    }
    viewer.set_dirty();
    D.transforms++;
  } else if (m.type === "init") onInit(m);
  else if (m.type === "state") {
    onState(m);
    const now = performance.now();
    D.arrivals = D.arrivals.filter((t) => now - t < 1000).concat([now]);
    D.rate = D.arrivals.length;  // states shown in the last second
    send({type: "ack"});  // the next update once this one is handled
  }
  else if (m.type === "exported") { D.exported = m; $("exported").textContent = m.error || ("wrote " + m.path); }
  else if (m.type === "error") $("message").textContent = m.message;
};
control.onclose = () => { $("status").textContent = "disconnected: the debugger stopped"; };

// ------------------------------------------------------------------ buttons, timeline, export
$("pause").onclick = () => send({type: D.state && D.state.paused ? "resume" : "pause"});
$("step").onclick = () => send({type: "step"});
$("reset").onclick = () => send({type: "reset"});
$("timeline").oninput = () => send({type: "scrub", index: Number($("timeline").value)});
$("export").onclick = () => send({type: "export", file: $("file").value});
D.buttonCenter = (id) => {
  const r = $(id).getBoundingClientRect();
  return [r.left + r.width / 2, r.top + r.height / 2];
};

function onInit(m) {
  D.init = m;
  showLoading();
  if (m.plot) { PLOT_SECONDS = m.plot.seconds; PLOT_RATE = m.plot.rate; }
  $("levels-box").style.display = m.levels.length ? "" : "none";
  $("sliders-box").style.display = m.sliders.length ? "" : "none";
  $("history").textContent = m.history_bounded
    ? `on record: the last ${m.history_seconds.toFixed(1)} s (at most ${m.history} frames, for memory; ${m.history_asked} s asked)`
    : `on record: the last ${m.history_asked} s`;
  labelHandles(m.handles);
  const box = $("sliders");
  box.replaceChildren();
  for (const s of m.sliders) {
    const row = el("div", {class: "slider" + (s.locked ? " locked" : "")}, el("span", {class: "name", title: s.name}, s.name));
    const input = document.createElement("input");
    Object.assign(input, {type: "range", min: s.lower, max: s.upper, step: "any", value: s.value,
                          disabled: s.locked, id: "joint:" + s.name});
    const value = document.createElement("span");
    value.textContent = s.locked ? `locked ${s.value.toFixed(3)}` : s.value.toFixed(3);
    input.oninput = () => { value.textContent = Number(input.value).toFixed(3);
                            send({type: "joint", name: s.name, value: Number(input.value)}); };
    row.append(input, value);
    box.append(row);
  }
  if (m.state && m.state.type) onState(m.state);
}

// ------------------------------------------------------------------ state: status, panel, plots

function onState(s) {
  D.state = s;
  if (s.restart) D.samples = [];  // a reset or a rewind: the run restarts
  for (const sample of s.samples) {  // at most PLOT_RATE samples a second are kept for the plots
    const last = D.samples[D.samples.length - 1];
    if (last && sample[0] < last[0]) D.samples = [];  // a reset or a rewind: the run restarts
    if (!last || sample[0] < last[0] || sample[0] - last[0] >= 1 / PLOT_RATE) D.samples.push(sample);
  }
  const newest = D.samples.length ? D.samples[D.samples.length - 1][0] : 0;
  while (D.samples.length && D.samples[0][0] < newest - PLOT_SECONDS) D.samples.shift();
  $("pause").textContent = s.paused ? "Resume" : "Pause";
  const frame = s.scrub === null ? "live" : `frame ${s.scrub + 1}/${s.frames} (t = ${s.frame_t.toFixed(2)} s)`;
  // one short field per line part: a long t or step count wraps between fields, never cuts one off
  $("status").replaceChildren(...[`t = ${s.t.toFixed(2)} s`, `steps ${s.steps}`, `updates/s ${D.rate}`, `frames/s ${D.fps}`]
    .map((text) => el("span", {class: "field"}, text)), el("br"),
    el("span", {class: "field"}, s.paused ? "PAUSED" : "running"), el("span", {class: "field"}, frame),
    ...(s.dropped ? [el("span", {class: "field"}, `${s.dropped} older frames dropped`)] : []));
  const timeline = $("timeline");
  timeline.max = Math.max(s.frames - 1, 0);
  if (s.scrub === null) timeline.value = timeline.max;
  drawLevels(s.levels);
  drawPairs(s.pairs, s.min_distance);
  drawPlots();
}

// ------------------------------------------------------------------ handles: find, pick, drag
// Each handle's task name, as a text label beside its ball, kept there on every drawing.
function labelHandles(handles) {
  const box = $("handle-labels");
  box.replaceChildren(...handles.map((h) => el("div", {class: "handle-label", "data-handle": h.name}, h.task)));
  placeHandleLabels();
}
function placeHandleLabels() {
  if (!D.init) return;
  const r = $("scene-box").getBoundingClientRect();
  for (const label of $("handle-labels").children) {
    const h = D.init.handles.find((x) => x.name === label.dataset.handle), node = h && viewer.scene_tree.find(h.path.split("/").filter((x) => x.length));
    if (!node || !node.object) continue;
    const c = toScreen(handleMatrix(h), [0, 0, 0]);
    const shown = c[2] < 1 && c[0] >= r.left && c[0] <= r.right && c[1] >= r.top && c[1] <= r.bottom;
    label.style.display = shown ? "" : "none";
    label.style.left = (c[0] - r.left + 10) + "px";
    label.style.top = (c[1] - r.top + 6) + "px";
  }
}
function handleMatrix(h) {
  viewer.scene.updateMatrixWorld(true);
  return viewer.scene_tree.find(h.path.split("/").filter((x) => x.length)).object.matrixWorld.clone();
}

function toScreen(M, p) {
  const v = new THREE.Vector3(p[0], p[1], p[2]).applyMatrix4(M).project(viewer.camera);
  const r = viewer.renderer.domElement.getBoundingClientRect();
  return [r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height, v.z];
}

function ringPoint(radius, axis, angle) {
  const p = [0, 0, 0], others = [0, 1, 2].filter((k) => k !== axis);
  p[others[0]] = radius * Math.cos(angle);
  p[others[1]] = radius * Math.sin(angle);
  return p;
}

// Screen positions of a handle's parts: its origin, its arrows' tips, points on its rings.
D.handleScreen = (name) => {
  const h = D.init.handles.find((x) => x.name === name);
  const M = handleMatrix(h);
  const tip = (i) => { const p = [0, 0, 0]; p[i] = h.size; return toScreen(M, p); };
  const radius = D.init.parts.ring_radius * h.size;
  return {center: toScreen(M, [0, 0, 0]), axes: [0, 1, 2].map(tip),
          rings: [0, 1, 2].map((i) => Array.from({length: 48}, (_, k) => toScreen(M, ringPoint(radius, i, k * Math.PI / 24))))};
};

function segmentDistance(p, a, b) {
  const dx = b[0] - a[0], dy = b[1] - a[1], l2 = dx * dx + dy * dy;
  const u = l2 > 0 ? Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / l2)) : 0;
  return Math.hypot(p[0] - a[0] - u * dx, p[1] - a[1] - u * dy);
}

function pick(x, y) {
  if (!D.init) return null;
  let best = null;
  const consider = (d, part) => { if (d < PICK_PX && (best === null || d < best.d)) best = Object.assign({d}, part); };
  for (const h of D.init.handles) {
    const s = D.handleScreen(h.name);
    const ball = Math.max(Math.hypot(...[0, 1].map((k) => toScreen(handleMatrix(h),
      [D.init.parts.ball_radius * h.size, 0, 0])[k] - s.center[k])), 6);
    const dc = Math.hypot(x - s.center[0], y - s.center[1]);
    if (dc < ball + 2) consider(0, {handle: h, kind: "move", screen: s});
    s.axes.forEach((tip, i) => consider(segmentDistance([x, y], s.center, tip) + (dc < ball + 2 ? PICK_PX : 0),
                                        {handle: h, kind: "axis", axis: i, screen: s}));
    s.rings.forEach((ring, i) => ring.forEach((p, k) => consider(
      segmentDistance([x, y], p, ring[(k + 1) % ring.length]), {handle: h, kind: "ring", axis: i, screen: s})));
  }
  return best;
}

// Delta (4x4, row-major) in the handle's frame for the pointer at (x, y), grabbed at D.drag.
function delta(x, y) {
  const g = D.drag, h = g.handle, c = g.screen.center, M = g.M;
  const m = new THREE.Matrix4();
  const e = new THREE.Vector3(...[0, 1, 2].map((k) => (k === g.axis ? 1 : 0)));
  if (g.kind === "axis") {
    const tip = g.screen.axes[g.axis], L = Math.hypot(tip[0] - c[0], tip[1] - c[1]);
    if (L < 1) return null;
    const along = ((x - g.x0) * (tip[0] - c[0]) + (y - g.y0) * (tip[1] - c[1])) / L;
    m.makeTranslation(...e.multiplyScalar(along * h.size / L).toArray());
  } else if (g.kind === "ring") {
    const a = [g.x0 - c[0], c[1] - g.y0], b = [x - c[0], c[1] - y];  // y up
    const angle = Math.atan2(a[0] * b[1] - a[1] * b[0], a[0] * b[0] + a[1] * b[1]);
    const axis = e.clone().transformDirection(M), forward = new THREE.Vector3();
    viewer.camera.getWorldDirection(forward);
    m.makeRotationAxis(e, axis.dot(forward) < 0 ? angle : -angle);
  } else {
    const r = viewer.renderer.domElement.getBoundingClientRect();
    const ndc = (px, py) => new THREE.Vector3((px - r.left) / r.width * 2 - 1, 1 - (py - r.top) / r.height * 2, c[2]);
    const moved = ndc(x, y).unproject(viewer.camera).sub(ndc(g.x0, g.y0).unproject(viewer.camera));
    const R = new THREE.Matrix4().extractRotation(M).transpose();
    m.makeTranslation(...moved.applyMatrix4(R).toArray());
  }
  return m.transpose().toArray();  // three.js stores column-major: transposed, it reads row-major
}

const scene = $("scene");
scene.addEventListener("pointerdown", (ev) => {
  const hit = pick(ev.clientX, ev.clientY);
  if (!hit) return;
  ev.stopPropagation();
  ev.preventDefault();
  viewer.controls.enabled = false;
  D.drag = Object.assign(hit, {x0: ev.clientX, y0: ev.clientY, M: handleMatrix(hit.handle)});
  send({type: "grab", handle: hit.handle.name});
}, true);
window.addEventListener("pointermove", (ev) => {
  if (!D.drag) return;
  ev.stopPropagation();
  const d = delta(ev.clientX, ev.clientY);
  if (d) { send({type: "drag", handle: D.drag.handle.name, delta: d}); D.drags++; }
}, true);
window.addEventListener("pointerup", (ev) => {
  if (!D.drag) return;
  ev.stopPropagation();
  send({type: "release"});
  D.drag = null;
  viewer.controls.enabled = true;
}, true);
