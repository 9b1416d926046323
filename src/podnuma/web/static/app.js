// The podnuma page: everything it shows comes from the /api endpoints (the
// same JSON as the command line's -o json). No data is ever inserted as HTML:
// text goes through textContent; the machine picture is the server's SVG,
// parsed as XML.
"use strict";

const state = {
  text: null,        // the scenario text that ran
  name: null,        // its file name (for messages)
  doc: null,         // /api/simulate
  explain: null,     // /api/explain?search=false
  step: 0,
  pictures: new Map(), // step -> {svg, owners}
  chosenCpu: null,
  uploaded: null,    // the text of the last uploaded file
  set: [],           // the --set lines the scenario ran with
};

// ---------------------------------------------------------------- helpers

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const $ = (id) => document.getElementById(id);

// "error: " before each line (an input with several problems: a line each, as the CLI prints them)
function errorLines(message) {
  return message.split("\n").map((line) => "error: " + line).join("\n");
}

function showError(box, message) {
  box.textContent = message ? errorLines(message) : "";
  box.hidden = !message;
}

async function api(path, {body, json, contentType} = {}) {
  const init = {method: body === undefined && json === undefined ? "GET" : "POST", headers: {}};
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers["Content-Type"] = "application/json";
  } else if (body !== undefined) {
    init.body = body;
    init.headers["Content-Type"] = contentType || "application/yaml";
  }
  let resp;
  try {
    resp = await fetch(path, init);
  } catch (e) {
    throw new Error("the server cannot be reached (" + e.message + ")");
  }
  const type = resp.headers.get("content-type") || "";
  if (!resp.ok) {
    let message = resp.status + " " + resp.statusText;
    if (type.includes("json")) {
      const data = await resp.json();
      if (data && data.error) message = data.error;
    }
    throw new Error(message);
  }
  return type.includes("json") ? resp.json() : resp.text();
}

function q(params) {
  const parts = [];
  for (const [k, v] of Object.entries(params)) {
    if (v !== null && v !== undefined) parts.push(encodeURIComponent(k) + "=" + encodeURIComponent(v));
  }
  return parts.length ? "?" + parts.join("&") : "";
}

// ---------------------------------------------------------------- overrides (--set)

// The override lines of the input card, as the scenario was run with them.
function setLines(id) {
  return $(id).value.split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
}

// A query string with the run's overrides appended (set=PATH=VALUE, repeated).
function qs(params) {
  const base = q(params);
  const extra = (state.set || []).map((l) => "set=" + encodeURIComponent(l));
  if (!extra.length) return base;
  return (base ? base + "&" : "?") + extra.join("&");
}

function nodes(list) {
  return list && list.length ? list.join(",") : "-";
}

function size(bytes) {
  const units = [["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]];
  for (const [u, n] of units) if (bytes >= n && bytes % n === 0) return bytes / n + u;
  for (const [u, n] of units) if (bytes >= n) return (bytes / n).toFixed(1) + u;
  return String(bytes);
}

function hintText(h) {
  if (!h) return "-";
  const mask = h.numaNodes && h.numaNodes.length ? "{" + h.numaNodes.join(",") + "}" : "any";
  return mask + (h.preferred ? " preferred" : " not preferred");
}

function memText(blocks) {
  if (!blocks || !blocks.length) return "-";
  return blocks.map((b) => b.type + " " + size(b.size) + " @NUMA " + nodes(b.numaNodes)).join(", ");
}

// ---------------------------------------------------------------- tabs

function selectTab(id) {
  for (const btn of document.querySelectorAll(".tab")) {
    btn.classList.toggle("active", btn.dataset.tab === id);
  }
  for (const body of document.querySelectorAll(".tab-body")) body.hidden = body.id !== id;
}

// ---------------------------------------------------------------- examples

async function loadExamples() {
  const list = await api("/api/examples");
  const select = $("example-select");
  const groups = new Map();
  for (const ex of list) {
    if (!groups.has(ex.group)) {
      const g = el("optgroup", {label: ex.group});
      groups.set(ex.group, g);
      select.append(g);
    }
    groups.get(ex.group).append(el("option", {value: ex.id}, ex.id + ": " + ex.title));
  }
  select.addEventListener("change", showExample);
  await showExample();
}

async function showExample() {
  const ex = await api("/api/examples/" + encodeURIComponent($("example-select").value));
  $("example-title").textContent = ex.title;
  $("example-desc").textContent = ex.description;
  return ex;
}

// ---------------------------------------------------------------- running

async function run(text, name) {
  const errorBox = $("error");
  showError(errorBox, null);
  $("busy").hidden = false;
  try {
    state.set = setLines("set-lines");
    const [doc, explain] = await Promise.all([
      api("/api/simulate" + qs({name}), {body: text}),
      api("/api/explain" + qs({name, search: false}), {body: text}),
    ]);
    Object.assign(state, {text, name, doc, explain, pictures: new Map(), chosenCpu: null});
    for (const id of ["result", "machine", "explain", "whatif"]) $(id).hidden = false;
    renderSteps();
    const slider = $("step-slider");
    slider.max = String(Math.max(0, doc.steps.length - 1));
    await selectStep(doc.steps.length - 1);
    document.body.dataset.ran = String(Number(document.body.dataset.ran || 0) + 1);
  } catch (e) {
    showError(errorBox, e.message);
    // what is shown belongs to another scenario: hide it
    for (const id of ["result", "machine", "explain", "whatif"]) $(id).hidden = true;
  } finally {
    $("busy").hidden = true;
  }
}

function admissionCell(s) {
  if (s.op === "removePod") return el("span", {class: "removed"}, "pod removed");
  if (s.op === "removeContainer") return el("span", {class: "removed"}, "container " + s.container + " removed");
  if (s.admitted) return el("span", {class: "ok"}, "✓ admitted");
  return el("span", {class: "bad", title: s.message || ""}, "✗ rejected: " + s.reason);
}

function renderSteps() {
  const doc = state.doc;
  const n = doc.node;
  const cfg = state.explain.config;
  $("summary").replaceChildren(
    el("b", {}, "node " + n.name), "  CPUs " + n.cpus + ", NUMA nodes " + nodes(n.numaNodes) +
    ", reserved " + (n.reservedCpus || "-") + ".  ",
    "Topology manager " + cfg.topologyManagerPolicy + " (scope " + cfg.topologyManagerScope + "), CPU manager " +
    cfg.cpuManagerPolicy + ", memory manager " + cfg.memoryManagerPolicy + ".  (" + state.name + ")");
  const head = el("tr", {}, ["#", "step", "pod", "QoS", "outcome", "containers: CPUs (isolation)", "node shared pool after"].map((h) => el("th", {}, h)));
  const rows = doc.steps.map((s) => {
    const containers = el("div", {});
    if (s.podAllocation) containers.append(el("div", {class: "mono"}, "pod budget: " + (s.podAllocation.cpus || "-")));
    for (const c of s.containers) {
      const tag = c.type === "app" ? "" : " (" + c.type + ")";
      containers.append(el("div", {class: "mono ctr", title: "show " + c.name + " on the machine",
        onclick: (ev) => { ev.stopPropagation(); selectStep(s.index).then(() => showContainer(s.pod, c.name)); }},
        c.name + tag + ": " + (c.cpus || "-") + " (" + c.isolation + ")"));
    }
    const op = s.op === "addPod" ? "pod arrives" : s.op === "removePod" ? "pod leaves" : "container leaves";
    return el("tr", {"data-step": s.index, onclick: () => selectStep(s.index)},
      el("td", {}, String(s.index)), el("td", {}, op), el("td", {class: "mono"}, s.pod),
      el("td", {}, s.qosClass || "-"), el("td", {}, admissionCell(s)), el("td", {}, containers),
      el("td", {class: "mono"}, s.defaultCpuSet || "-"));
  });
  $("steps").replaceChildren(el("thead", {}, head), el("tbody", {}, rows));
}

async function selectStep(index) {
  if (index < 0) return;
  state.step = index;
  $("step-slider").value = String(index);
  const s = state.doc.steps[index];
  $("step-label").textContent = "after step " + index + ": " + describeStep(s);
  for (const tr of document.querySelectorAll("#steps tbody tr")) {
    tr.classList.toggle("selected", Number(tr.dataset.step) === index);
  }
  renderExplain(index);
  renderWhatIfIntro(index);
  await renderPicture(index);
}

function describeStep(s) {
  if (s.op === "addPod") return s.pod + (s.admitted ? " admitted" : " rejected (" + s.reason + ")");
  if (s.op === "removePod") return s.pod + " removed";
  return s.pod + "/" + s.container + " removed";
}

// ---------------------------------------------------------------- picture

async function picture(index) {
  if (!state.pictures.has(index)) {
    const params = qs({name: state.name, step: index});
    const [svg, owners] = await Promise.all([
      api("/api/topology" + params, {body: state.text}),
      api("/api/topology" + params + "&format=json", {body: state.text}),
    ]);
    state.pictures.set(index, {svg, owners});
  }
  return state.pictures.get(index);
}

async function renderPicture(index) {
  const box = $("picture");
  let pic;
  try {
    pic = await picture(index);
  } catch (e) {
    showError($("error"), e.message);
    return;
  }
  if (state.step !== index) return; // the slider moved on meanwhile
  const parsed = new DOMParser().parseFromString(pic.svg, "image/svg+xml");
  const svg = document.importNode(parsed.documentElement, true);
  box.replaceChildren(svg);
  box.dataset.step = String(index);
  svg.addEventListener("click", (ev) => {
    const target = ev.target.closest("[data-cpu], [data-owner]");
    if (!target) return;
    if (target.dataset.cpu !== undefined) chooseCpu(Number(target.dataset.cpu));
    else chooseOwner(target.dataset.owner);
  });
  if (state.chosenCpu !== null && pic.owners.cpuOwner[String(state.chosenCpu)] !== undefined) chooseCpu(state.chosenCpu);
  else $("cpu-info").dataset.owner = "";
}

function ownerByName(name) {
  const pic = state.pictures.get(state.step);
  return pic.owners.owners.find((o) => o.name === name);
}

function highlight(ownerName, cpu) {
  for (const r of $("picture").querySelectorAll("rect.pu")) {
    r.classList.toggle("same-owner", r.dataset.owner === ownerName);
    r.classList.toggle("chosen", cpu !== null && Number(r.dataset.cpu) === cpu);
  }
}

// The admission (explain) and step result of the pod's latest addPod step up to the shown step.
function admissionOf(pod) {
  for (let i = state.step; i >= 0; i--) {
    const s = state.doc.steps[i];
    if (s.pod === pod && s.op === "addPod") {
      const adm = state.explain.admissions.find((a) => a.step === i);
      return {step: s, adm};
    }
  }
  return {step: null, adm: null};
}

const KIND_TEXT = {
  reserved: "Reserved for the system (reservedSystemCPUs, or what the kubelet derives from kubeReserved/systemReserved). No pod gets them exclusively.",
  shared: "The node's shared pool: every container without exclusive CPUs (Burstable, BestEffort, fractional CPUs) runs here, pods of other nodes' pools excluded.",
  pod: "The pod's shared pool (pod-level resources): CPUs of the pod's budget not carved into exclusive slices; the pod's other containers share them.",
  exclusive: "Exclusive CPUs of one container: no other container runs on them (CFS quota disabled).",
  other: "Held outside the shared pool: checkpoint entries of pods no step names, or leftovers waiting for the kubelet's clean-up.",
};

function parseCpus(text) {
  const out = new Set();
  for (const part of (text || "").split(",")) {
    if (!part) continue;
    const [a, b] = part.split("-").map(Number);
    for (let i = a; i <= (b === undefined ? a : b); i++) out.add(i);
  }
  return out;
}

// A container of the step table: its CPUs outlined, its pool, hint and why.
function showContainer(pod, name) {
  const {adm} = admissionOf(pod);
  const c = adm ? adm.containers.find((x) => x.name === name) : null;
  const info = $("cpu-info");
  if (!c) return;
  state.chosenCpu = null;
  const cpus = parseCpus(c.cpus);
  for (const r of $("picture").querySelectorAll("rect.pu")) {
    r.classList.toggle("same-owner", cpus.has(Number(r.dataset.cpu)));
    r.classList.remove("chosen");
  }
  info.dataset.owner = "";
  info.dataset.cpu = "";
  info.dataset.container = pod + "/" + name;
  info.replaceChildren(
    el("h3", {}, pod + " / " + name + (c.type === "app" ? "" : " (" + c.type + ")")),
    el("dl", {},
      el("dt", {}, "CPUs"), el("dd", {class: "mono"}, c.cpus || "-"),
      el("dt", {}, "pool"), el("dd", {id: "cpu-pool"}, c.pool),
      el("dt", {}, "hint"), el("dd", {id: "cpu-hint"}, hintText(c.topologyHint)),
      el("dt", {}, "memory"), el("dd", {}, memText(c.memory)),
      el("dt", {}, "CFS quota"), el("dd", {}, c.cfsQuota)),
    el("p", {class: "kv"}, "admitted at step " + adm.step + " (" + adm.qos.class + ")"),
    el("h3", {}, "why"), el("ul", {class: "why", id: "cpu-why"}, c.why.map((w) => el("li", {}, w))));
}

function chooseCpu(cpu) {
  state.chosenCpu = cpu;
  const pic = state.pictures.get(state.step);
  const ownerName = pic.owners.cpuOwner[String(cpu)];
  showOwner(ownerByName(ownerName), cpu, pic.owners.numaOfCpu[String(cpu)]);
}

function chooseOwner(name) {
  state.chosenCpu = null;
  showOwner(ownerByName(name), null, null);
}

function showOwner(owner, cpu, numa) {
  const info = $("cpu-info");
  if (!owner) return;
  highlight(owner.name, cpu);
  info.dataset.owner = owner.name;
  info.dataset.cpu = cpu === null ? "" : String(cpu);
  info.dataset.container = "";
  const title = cpu === null ? owner.name : "CPU " + cpu;
  const dl = el("dl", {},
    cpu === null ? null : [el("dt", {}, "NUMA node"), el("dd", {}, String(numa))],
    el("dt", {}, "owner"), el("dd", {id: "cpu-owner"}, el("span", {class: "swatch", style: "background:" + state.pictures.get(state.step).owners.colors[owner.name]}), owner.name),
    el("dt", {}, "its CPUs"), el("dd", {class: "mono"}, owner.cpus));
  const parts = [el("h3", {}, title), dl, el("p", {class: "hint"}, KIND_TEXT[owner.kind] || "")];
  if (owner.pod) {
    const {step, adm} = admissionOf(owner.pod);
    if (adm) {
      parts.push(el("p", {class: "kv"}, "admitted at step " + adm.step + " (" + adm.qos.class + ")"));
      if (owner.kind === "pod" && adm.podAllocation) {
        parts.push(el("p", {class: "kv"}, "pod budget: CPUs " + adm.podAllocation.cpus + ", " + memText(adm.podAllocation.memory)));
        const on = adm.containers.filter((c) => c.isolation === "pod").map((c) => c.name);
        if (on.length) parts.push(el("p", {class: "kv"}, "containers on this pool: " + on.join(", ")));
      }
      const c = owner.container ? adm.containers.find((x) => x.name === owner.container) : null;
      if (c) {
        parts.push(el("dl", {},
          el("dt", {}, "pool"), el("dd", {id: "cpu-pool"}, c.pool),
          el("dt", {}, "hint"), el("dd", {id: "cpu-hint"}, hintText(c.topologyHint)),
          el("dt", {}, "memory"), el("dd", {}, memText(c.memory)),
          el("dt", {}, "CFS quota"), el("dd", {}, c.cfsQuota)));
        parts.push(el("h3", {}, "why"), el("ul", {class: "why", id: "cpu-why"}, c.why.map((w) => el("li", {}, w))));
      }
    } else if (step) {
      parts.push(el("p", {}, "from step " + step.index));
    }
  }
  info.replaceChildren(...parts);
}

// ---------------------------------------------------------------- explain

function renderExplain(index) {
  const body = $("explain-body");
  const s = state.doc.steps[index];
  if (s.op !== "addPod") {
    body.replaceChildren(el("p", {}, "Step " + index + " " + describeStep(s) +
      ": the kubelet releases what it held (exclusive CPUs go back to the shared pool; a pod's budget when the pod goes)."));
    return;
  }
  const adm = state.explain.admissions.find((a) => a.step === index);
  if (!adm) { body.replaceChildren(el("p", {}, "no explanation for this step")); return; }
  body.replaceChildren(...admissionView(adm, index));
}

function admissionView(adm, index) {
  const out = [];
  out.push(el("p", {class: "verdict"}, el("b", {}, "step " + adm.step + "  " + adm.pod + "  "),
    adm.admitted ? el("span", {class: "ok"}, "✓ admitted") : el("span", {class: "bad"}, "✗ rejected: " + adm.reason)));
  out.push(el("p", {class: "kv"}, el("b", {}, "QoS " + adm.qos.class + ": "), adm.qos.why));
  const topo = adm.topology;
  out.push(el("p", {class: "kv"}, el("b", {}, "Topology manager: "), topo.policy + ", scope " + topo.scope));
  if (topo.note) out.push(el("p", {class: "hint"}, topo.note));
  for (const m of topo.merges) {
    const who = m.container === null ? "the pod (pod scope)" : "container " + m.container;
    const rows = m.providers.map((p) => el("tr", {},
      el("td", {}, p.provider), el("td", {}, p.resource || "-"),
      el("td", {}, p.hints && p.hints.length ? p.hints.map(hintText).join("; ") : p.meaning)));
    out.push(el("h3", {}, "hints for " + who));
    out.push(el("table", {}, el("thead", {}, el("tr", {}, el("th", {}, "provider"), el("th", {}, "resource"), el("th", {}, "hints (NUMA nodes)"))), el("tbody", {}, rows)));
    if (m.merged) out.push(el("p", {class: "kv"}, "merged: " + hintText(m.merged) + " → " + (m.admit ? "admitted" : "REJECTED")));
    out.push(el("ul", {class: "why"}, m.why.map((w) => el("li", {}, w))));
  }
  if (adm.podAllocation) {
    out.push(el("p", {class: "kv"}, el("b", {}, "Pod budget: "), "CPUs " + (adm.podAllocation.cpus || "-") +
      " (NUMA " + nodes(adm.podAllocation.cpuNumaNodes) + "), " + memText(adm.podAllocation.memory)));
  }
  if (adm.containers.length) {
    const rows = adm.containers.map((c) => el("tr", {},
      el("td", {}, c.name + (c.type === "app" ? "" : " (" + c.type + ")")), el("td", {}, c.pool),
      el("td", {class: "mono"}, c.cpus || "-"), el("td", {}, nodes(c.cpuNumaNodes)), el("td", {}, memText(c.memory)),
      el("td", {}, hintText(c.topologyHint)), el("td", {}, el("ul", {class: "why"}, c.why.map((w) => el("li", {}, w))))));
    out.push(el("h3", {}, "containers"));
    out.push(el("div", {class: "table-wrap"}, el("table", {},
      el("thead", {}, el("tr", {}, ["container", "pool", "CPUs", "NUMA", "memory", "hint", "why"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows))));
    if (adm.cpuPolicyRule) out.push(el("p", {class: "hint"}, "exclusive CPUs: " + adm.cpuPolicyRule));
  }
  if (adm.rejection) {
    const r = adm.rejection;
    out.push(el("h3", {class: "bad"}, "rejection"));
    out.push(el("p", {class: "kv"}, "stage: " + r.stageText + " (" + r.who + ")"));
    out.push(el("p", {class: "kv"}, "reason: " + r.reason + (r.meaning ? " — " + r.meaning : "")));
    out.push(el("p", {class: "kv mono"}, "message: " + r.message));
    const slot = el("div", {id: "alternatives"});
    out.push(el("button", {id: "find-alternatives", onclick: () => findAlternatives(index, slot)}, "Find the nearest admissible configuration"), slot);
  }
  return out;
}

async function findAlternatives(index, slot) {
  slot.replaceChildren(el("p", {class: "busy"}, "re-running variations…"));
  try {
    const doc = await api("/api/explain" + qs({name: state.name, step: index}), {body: state.text});
    const adm = doc.admissions[0];
    // a pod-level rewrite: what a kubelet restart does to it (the pod alone on the node)
    const restartOf = (a) => a.restart ? [el("br"), "after a kubelet restart (v1.37.2, " + a.restart.upstreamIssue +
      "), the pod alone on the node (scope " + a.restart.scope + "): " + a.restart.summary] : [];
    const items = (adm.alternatives || []).map((a) =>
      el("li", {}, (a.admitted ? "✓ " : a.admitted === null ? "? " : "✗ ") + a.summary, ...restartOf(a)));
    slot.replaceChildren(el("ul", {class: "why"}, items.length ? items : [el("li", {}, "no single change tried admits the pod")]),
      ...renderCandidates(adm.search));
  } catch (e) {
    slot.replaceChildren(el("div", {class: "error"}, errorLines(e.message)));
  }
}

// Every change the nearest-configuration search ran, in order (smallest
// change first), with the engine's verdict; the nearest admitted one marked.
function renderCandidates(search) {
  if (!search || !search.candidates || !search.candidates.length) return [];
  const rows = search.candidates.map((c) => el("tr", {class: c.order === search.nearest ? "nearest" : ""},
    el("td", {}, String(c.order)), el("td", {}, c.family),
    el("td", {}, c.admitted ? "✓ admitted" : c.admitted === null ? "? could not be tried" : "✗ rejected"),
    el("td", {}, c.admitted ? "" : (c.reason || "")), el("td", {}, c.change)));
  return [
    el("h4", {}, "changes tried, smallest first"),
    el("div", {class: "table-wrap"}, el("table", {id: "candidates"},
      el("thead", {}, el("tr", {}, ["#", "family", "verdict", "reason", "change"].map((h) => el("th", {}, h)))),
      el("tbody", {}, rows))),
    el("p", {class: "kv", id: "nearest-change"}, search.nearest
      ? "nearest admissible: #" + search.nearest + " " + search.nearestChange
      : "no change tried admits the pod"),
  ];
}

// ---------------------------------------------------------------- what-if

function renderWhatIfIntro(index) {
  const s = state.doc.steps[index];
  const usable = s.op === "addPod";
  $("run-compare").disabled = !usable;
  $("run-advise").disabled = !usable;
  $("whatif-body").replaceChildren(el("p", {class: "hint"}, usable
    ? "Pod " + s.pod + " (step " + index + ")."
    : "Select a step where a pod arrives."));
}

const METRICS = [
  ["admitted", (m) => m.admitted ? "✓ admitted" : "✗ " + m.reason],
  ["QoS", (m) => m.qosClass || "-"],
  ["exclusive CPUs", (m) => m.exclusiveCpus.count + " (" + (m.exclusiveCpus.cpus || "-") + ")"],
  ["pod shared pool", (m) => m.podSharedCpus.count + " (" + (m.podSharedCpus.cpus || "-") + ")"],
  ["CPUs only sidecars use", (m) => String(m.sidecarOnlyCpus.count)],
  ["CPUs taken from the node", (m) => m.heldCpus.count + " (" + (m.heldCpus.cpus || "-") + ")"],
  ["on the node shared pool", (m) => m.nodeSharedContainers.join(", ") || "-"],
  ["memory pinned", (m) => size(m.memoryBytes)],
  ["huge pages pinned", (m) => Object.entries(m.hugepagesBytes || {}).map(([r, n]) => r + " " + size(n)).join(", ") || "0"],
  ["NUMA nodes", (m) => nodes(m.numaNodes)],
  ["copies that fit", (m) => String(m.density) + (m.densityCapped ? "+" : "")],
];

async function runWhatIf(kind) {
  const body = $("whatif-body");
  body.replaceChildren(el("p", {class: "busy"}, "measuring…"));
  try {
    const req = {scenario: state.text, scenarioName: state.name, step: state.step, set: state.set || []};
    if (kind === "advise") Object.assign(req, adviseOptions());
    const doc = await api("/api/" + kind, {json: req});
    body.replaceChildren(...(kind === "compare" ? compareView(doc) : adviseView(doc)), ...restartRiskView(doc));
  } catch (e) {
    body.replaceChildren(el("div", {class: "error"}, "error: " + e.message));
  }
}

// Each pod's name for people (the CLI's words): its name, followed by
// where it is in the input when another pod of the answer has the same
// name; the restart entries name their pod by its index (podIndex)
function podLabels(pods) {
  const count = new Map();
  for (const p of pods) if (p.pod) count.set(p.pod, (count.get(p.pod) || 0) + 1);
  return pods.map((p) => !p.pod ? p.source : (count.get(p.pod) > 1 ? p.pod + " (" + p.source + ")" : p.pod));
}

function compareView(doc) {
  const out = [];
  const names = podLabels(doc.pods);
  for (const [i, p] of doc.pods.entries()) {
    const label = (m) => (m.form === "podLevel" ? "pod-level" : "per-container") + ", scope " + m.scope;
    const head = el("tr", {}, el("th", {}, ""), p.runs.map((m) =>
      el("th", {}, label(m) + (m.form === p.asWritten ? " (as written)" : ""))));
    const rows = METRICS.map(([name, f]) => el("tr", {}, el("td", {}, name), p.runs.map((m) => el("td", {}, f(m)))));
    out.push(el("h3", {}, names[i] + ": written " + (p.asWritten === "podLevel" ? "pod-level" : "per-container")));
    out.push(el("div", {class: "table-wrap"}, el("table", {class: "whatif-table", id: "compare-table"}, el("thead", {}, head), el("tbody", {}, rows))));
    out.push(el("ul", {class: "why"}, p.derived.containers.map((c) => el("li", {}, c.name + ": " + c.role + " — " + c.why))));
    if (p.notes.length) out.push(el("ul", {class: "why hint"}, p.notes.map((n) => el("li", {}, n))));
  }
  return out;
}

// advise's own controls: the pod shared pool (auto or N), the strategy, sidecar names
function adviseOptions() {
  const pool = $("advise-pool").value.trim();
  const sidecars = $("advise-sidecars").value.split(",").map((n) => n.trim()).filter((n) => n);
  return {
    sharedPoolCpus: pool === "" || pool === "auto" ? "auto" : (/^[0-9]+$/.test(pool) ? Number(pool) : pool),
    strategy: $("advise-strategy").value,
    sidecars: sidecars,
  };
}

function adviseSearchView(p) {
  const out = [];
  if (p.sidecars && p.sidecars.length) {
    out.push(el("ul", {class: "why", id: "advise-sidecars-found"}, p.sidecars.map((s) => el("li", {}, "sidecar " + s.name + ": " + s.rule))));
  }
  if (p.candidates && p.candidates.length) {
    out.push(el("ul", {class: "why", id: "advise-candidates"}, p.candidates.map((c) => el("li", {},
      c.form + ": " +
      (c.verdict === "chosen" ? "admitted, chosen" : "refused: " + c.reason)))));
  }
  if (p.beyondCpus && p.beyondCpus.length) {
    out.push(el("ul", {class: "why", id: "advise-beyond"}, p.beyondCpus.map((x) => el("li", {}, x))));
  }
  return out;
}

function adviseView(doc) {
  const out = [];
  for (const message of doc.errors) out.push(el("div", {class: "error"}, "error: " + message));
  const names = podLabels(doc.pods);
  for (const [i, p] of doc.pods.entries()) {
    out.push(el("h3", {id: "advise-status"}, names[i] + ": " + (p.status === "rewritten" ? "rewrite proposed" : "skipped")));
    if (p.reason) out.push(el("p", {}, p.reason));
    if (p.savings) {
      const s = p.savings;
      const rows = [
        ["exclusive CPUs", s.exclusiveCpusBefore, s.exclusiveCpusAfter],
        ["CPUs only sidecars use", s.sidecarOnlyCpusBefore, s.sidecarOnlyCpusAfter],
        ["CPUs taken from the node", s.cpusTakenFromNodeBefore, s.cpusTakenFromNodeAfter],
        ["copies that fit", s.densityBefore, s.densityAfter],
      ].map(([n, b, a]) => el("tr", {}, el("td", {}, n), el("td", {}, b === null ? "-" : String(b)), el("td", {}, String(a))));
      out.push(el("table", {class: "whatif-table"}, el("thead", {}, el("tr", {}, el("th", {}, ""), el("th", {}, "as written"), el("th", {}, "pod-level rewrite"))), el("tbody", {}, rows)));
    }
    if (p.containers.length) out.push(el("ul", {class: "why"}, p.containers.map((c) => el("li", {}, c.name + ": " + c.role + " — " + c.why))));
    out.push(...adviseSearchView(p));
    if (p.rewrite) out.push(el("details", {}, el("summary", {}, "the rewritten pod (JSON)"), el("pre", {class: "manifest"}, JSON.stringify(p.rewrite, null, 2))));
    if (p.notes.length) out.push(el("ul", {class: "why hint"}, p.notes.map((n) => el("li", {}, n))));
  }
  return out;
}

// ---------------------------------------------------------------- build

function indent(text, pad) {
  return text.replace(/\s+$/, "").split("\n").map((l) => (l.trim() ? pad + l : "")).join("\n");
}

function buildScenario() {
  const v = (id) => $(id).value.trim();
  const pods = $("b-pods").value.split(/^---\s*$/m).map((d) => d.trim()).filter((d) => d && !/^(#.*\n?)*$/.test(d));
  const config = v("b-config");
  const lines = [
    "# built by the podnuma page",
    "apiVersion: podnuma.io/v1",
    "kind: Scenario",
    "node:",
    "  name: " + JSON.stringify(v("b-name") || "my-node"),
    "  synthetic:",
    "    sockets: " + (v("b-sockets") || "1"),
    "    numaNodesPerSocket: " + (v("b-numa") || "1"),
    "    coresPerNumaNode: " + (v("b-cores") || "1"),
    "    threadsPerCore: " + (v("b-threads") || "1"),
    "    memoryPerNumaNode: " + JSON.stringify(v("b-memory") || "1Gi"),
    config ? "kubeletConfig:\n" + indent(config, "  ") : "kubeletConfig: {}",
    pods.length ? "steps:" : "steps: []",
  ];
  for (const pod of pods) lines.push("  - addPod:\n" + indent(pod, "      "));
  return lines.join("\n") + "\n";
}

// ---------------------------------------------------------------- fleet

function valueText(v) {
  if (v === null || v === undefined) return "-";
  if (typeof v === "object") return JSON.stringify(v);
  return String(v);
}

function jsonView(data, depth) {
  if (Array.isArray(data)) {
    if (data.length && data.every((x) => x && typeof x === "object" && !Array.isArray(x))) {
      const keys = [...new Set(data.flatMap((x) => Object.keys(x)))];
      const simple = keys.filter((k) => data.every((x) => x[k] === undefined || x[k] === null || typeof x[k] !== "object"));
      const nested = keys.filter((k) => !simple.includes(k));
      const rows = data.map((x) => el("tr", {}, simple.map((k) => el("td", {}, valueText(x[k]))),
        nested.length ? el("td", {}, el("details", {}, el("summary", {}, nested.join(", ")),
          el("pre", {class: "manifest"}, JSON.stringify(Object.fromEntries(nested.map((k) => [k, x[k]])), null, 2)))) : null));
      return el("div", {class: "table-wrap"}, el("table", {},
        el("thead", {}, el("tr", {}, simple.map((k) => el("th", {}, k)), nested.length ? el("th", {}, "more") : null)),
        el("tbody", {}, rows)));
    }
    return el("ul", {}, data.map((x) => el("li", {}, typeof x === "object" && x !== null ? jsonView(x, depth + 1) : valueText(x))));
  }
  if (data && typeof data === "object") {
    const out = el("div", {});
    const scalars = Object.entries(data).filter(([, v]) => v === null || typeof v !== "object");
    if (scalars.length) {
      out.append(el("dl", {class: "cpu-info"}, scalars.flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, valueText(v))])));
    }
    for (const [k, v] of Object.entries(data)) {
      if (v === null || typeof v !== "object") continue;
      out.append(el(depth < 2 ? "h3" : "h4", {}, k), jsonView(v, depth + 1));
    }
    return out;
  }
  return el("span", {}, valueText(data));
}

const FLEET_METRICS = [
  ["exclusiveCpus", "exclusive CPUs"], ["sidecarOnlyCpus", "CPUs only sidecars use"],
  ["strandedCpus", "stranded CPUs"], ["freeCpus", "free CPUs"], ["cpus", "CPUs"],
  ["reservedCpus", "reserved CPUs"], ["pods", "pods"], ["admitted", "admitted"],
  ["rejected", "rejected"], ["spanningPods", "pods spanning NUMA nodes"],
  ["rewrittenPods", "pods rewritten"], ["nodes", "nodes replayed"],
  ["rejectedPodCpus", "CPUs of rejected pods, returned"],
];

// A podnuma.io/v1 FleetReport (podnuma fleet analyze -o json): the fleet, the
// summary per what-if with its change, workloads, rejections, issues, nodes.
function fleetView(r) {
  const labels = Object.keys(r.summary || {});
  const out = [];
  const f = r.fleet || {};
  const status = f.nodeStatus || {};
  const assumedCount = f.nodesAssumed || 0;
  out.push(el("p", {class: "kv", id: "fleet-headline"}, el("b", {}, "Fleet: "), (f.nodes ?? "?") + " nodes (" +
    Object.entries(status).map(([k, v]) => v + " " + k).join(", ") + "), " + (f.podsReplayed ?? "?") +
    " pods replayed of " + (f.podsInDumps ?? "?") + " in the dumps" +
    (assumedCount ? ": " + f.podsInTotals + " in the totals, " + f.podsOnAssumedNodes + " on " + assumedCount +
      " node(s) whose configuration is assumed" : "") +
    (f.podsDumpedTwice ? " (" + f.podsDumpedTwice + " pod(s) found in two dumps, counted once)" : "")));
  // a what-if's header is numbered: two long labels never read the same
  const header = (l, i) => (i === 0 ? l : "(" + i + ") " + l);
  const head = el("tr", {}, el("th", {}, ""), labels.map((l, i) => el("th", {}, header(l, i))));
  const rows = FLEET_METRICS.map(([key, text]) => el("tr", {}, el("td", {}, text), labels.map((l) => {
    const t = r.summary[l] || {};
    const change = t.change && t.change[key] !== undefined && t.change[key] !== 0
      ? " (" + (t.change[key] > 0 ? "+" : "") + t.change[key] + ")" : "";
    return el("td", {}, valueText(t[key]) + change);
  })));
  rows.push(el("tr", {}, el("td", {}, "CPUs freed for other pods"), labels.map((l, i) => {
    const fr = (r.summary[l] || {}).freedForOtherPods;
    return el("td", {}, i === 0 || !fr ? "-" : (fr.cpus > 0 ? "+" : "") + fr.cpus +
      (fr.nodesRejectingRunningPods && fr.nodesRejectingRunningPods.length
        ? " (not counted: " + fr.nodesRejectingRunningPods.length + " node(s) rejecting running pods)" : ""));
  })));
  out.push(el("h3", {}, "summary (nodes whose configuration is known)"), el("div", {class: "table-wrap"}, el("table", {id: "fleet-summary"}, el("thead", {}, head), el("tbody", {}, rows))));
  for (const [i, l] of labels.entries()) {
    const excluded = i > 0 ? (r.summary[l] || {}).excludedNodes || [] : [];
    if (excluded.length) out.push(el("p", {class: "note"}, header(l, i) + ": left out of this column and its changes (the what-if fails there): " + excluded.join(", ")));
  }
  const assumed = (r.assumed || {}).nodes || [];
  if (assumed.length) {
    out.push(el("h3", {}, "nodes whose configuration is assumed (not in the totals)"), jsonView(assumed.map((a) => ({
      node: a.name, contradictions: (a.contradictions || []).join("; ") || "nothing in the dumps"})), 2));
  }
  const wl = Object.entries(r.workloads || {});
  if (wl.length) {
    const whead = el("tr", {}, ["workload", "kind", "nodes"].map((h) => el("th", {}, h)), labels.map((l) => el("th", {}, "copies, " + l)));
    const wrows = wl.map(([name, w]) => el("tr", {}, el("td", {class: "mono"}, name), el("td", {}, w.kind), el("td", {}, valueText(w.nodes)),
      labels.map((l) => el("td", {}, w[l] ? w[l].copies + " (" + w[l].min + "-" + w[l].max + " per node)" : "-"))));
    out.push(el("h3", {}, "workloads: copies that fit"), el("div", {class: "table-wrap"}, el("table", {}, el("thead", {}, whead), el("tbody", {}, wrows))));
  }
  for (const [label, list] of Object.entries(r.rejected || {})) {
    if (list.length) out.push(el("h3", {}, "rejected, " + label + " (" + list.length + ")"), jsonView(list, 2));
  }
  if ((r.issues || []).length) out.push(el("h3", {}, "issues (" + r.issues.length + ")"), jsonView(r.issues, 2));
  if ((r.nodes || []).length) out.push(el("h3", {}, "nodes"), jsonView(r.nodes, 2));
  return out;
}

async function drawFleet(text, name, slot) {
  showError($("fleet-error"), null);
  try {
    const got = await api("/api/fleet/html" + q({name}), {body: text, contentType: "application/json"});
    // the server answers the report with a sandbox policy: its scripts run in an opaque origin
    slot.replaceChildren(el("iframe", {class: "fleet", sandbox: "allow-scripts", src: got.url, title: "fleet report " + name}));
  } catch (e) {
    showError($("fleet-error"), e.message);
  }
}

// The files of a cluster dump: relative names (a directory's own name
// dropped) of its data files, hidden files and directories skipped.
async function dumpFiles() {
  const files = {};
  for (const input of [$("dump-files"), $("dump-dir")]) {
    for (const f of input.files) {
      const parts = (f.webkitRelativePath || f.name).split("/");
      const rel = (parts.length > 1 ? parts.slice(1) : parts).join("/");
      if (!/\.(json|ya?ml)$/i.test(rel) || rel.split("/").some((p) => p.startsWith("."))) continue;
      files[rel] = await f.text();
    }
  }
  return files;
}

async function analyzeDump() {
  const body = $("fleet-body");
  showError($("fleet-error"), null);
  try {
    const files = await dumpFiles();
    if (!Object.keys(files).length) throw new Error("pick the dump's files (.json, .yaml) or its directory");
    const whatIfs = $("dump-whatifs").value.split(/\s+/).filter((w) => w);
    if ($("dump-whatif-gates").checked && !whatIfs.includes("gates")) whatIfs.push("gates");
    const got = await api("/api/fleet/analyze", {json: {files, whatIfs, set: setLines("dump-set")}});
    const names = Object.keys(files).sort().join(", ");
    body.replaceChildren(el("p", {class: "hint", id: "dump-read"}, "analysed: " + names),
      el("iframe", {class: "fleet", sandbox: "allow-scripts", src: got.url, title: "fleet report"}));
  } catch (e) {
    showError($("fleet-error"), e.message);
  }
}

async function openFleet(file) {
  const body = $("fleet-body");
  showError($("fleet-error"), null);
  body.replaceChildren();
  const text = await file.text();
  const name = file.name;
  if (/\.html?$/i.test(name) || /^\s*<(!doctype|html)/i.test(text)) {
    // shown in a sandbox: no scripts, no access to this page
    const frame = el("iframe", {class: "fleet", sandbox: "", title: "fleet report " + name});
    frame.srcdoc = text;
    body.replaceChildren(frame);
    return;
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (e) {
    showError($("fleet-error"), name + ": not a JSON or HTML fleet report: " + e.message);
    return;
  }
  if (data && data.kind === "FleetReport" && data.summary) {
    const slot = el("div", {id: "fleet-drawn"});
    const draw = el("button", {id: "fleet-draw", onclick: () => drawFleet(text, name, slot)},
      "Draw it with its charts (the fleet's HTML report)");
    body.replaceChildren(el("p", {class: "hint"}, name), draw, slot, ...fleetView(data));
  } else {
    body.replaceChildren(el("p", {class: "hint"}, name + ": not a FleetReport document; shown as it is"), jsonView(data, 0));
  }
}

// ---------------------------------------------------------------- wiring

async function readFile(file) {
  const text = await file.text();
  $("scenario-text").value = text;
  state.uploaded = text;
  return text;
}

function wire() {
  for (const btn of document.querySelectorAll(".tab")) btn.addEventListener("click", () => selectTab(btn.dataset.tab));
  $("run-example").addEventListener("click", async () => {
    const ex = await showExample();
    await run(ex.text, ex.name);
  });
  $("file-input").addEventListener("change", async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    const text = await readFile(file);
    await run(text, file.name);
  });
  $("run-text").addEventListener("click", () => {
    const file = $("file-input").files[0];
    const text = $("scenario-text").value;
    const name = file && text === state.uploaded ? file.name : "pasted.yaml";
    run(text, name);
  });
  $("run-build").addEventListener("click", () => {
    const text = buildScenario();
    $("scenario-text").value = text;
    run(text, "built.yaml");
  });
  let pending = null;
  $("step-slider").addEventListener("input", (ev) => {
    const index = Number(ev.target.value);
    clearTimeout(pending);
    pending = setTimeout(() => selectStep(index), 120);
  });
  $("run-compare").addEventListener("click", () => runWhatIf("compare"));
  $("run-advise").addEventListener("click", () => runWhatIf("advise"));
  $("fleet-input").addEventListener("change", (ev) => {
    if (ev.target.files[0]) openFleet(ev.target.files[0]);
  });
  $("run-dump").addEventListener("click", analyzeDump);
}

// The form's starting node and kubelet configuration: the built-in ones
// the commands use without --node / --kubelet-config.
async function loadDefaults() {
  const d = await api("/api/defaults");
  const n = d.node.synthetic;
  $("b-name").value = d.node.name;
  $("b-sockets").value = n.sockets;
  $("b-numa").value = n.numaNodesPerSocket;
  $("b-cores").value = n.coresPerNumaNode;
  $("b-threads").value = n.threadsPerCore;
  $("b-memory").value = n.memoryPerNumaNode;
  $("b-config").value = d.kubeletConfig;
}

document.addEventListener("DOMContentLoaded", async () => {
  wire();
  try {
    await Promise.all([loadExamples(), loadDefaults()]);
    // Show something at once: the first example, run.
    const ex = await showExample();
    await run(ex.text, ex.name);
    document.body.dataset.ready = "1";
  } catch (e) {
    showError($("error"), e.message);
  }
});

// ---------------------------------------------------------------- kubelet restart

const RESTART_MARK = {kept: "✓ kept", moved: "↻ moved", rejected: "✗ rejected", unknown: "? unknown"};

function restartView(doc) {
  const head = el("tr", {}, ["pod", "outcome", "CPUs before", "CPUs after", "NUMA before", "NUMA after", "reason"]
    .map((h) => el("th", {}, h)));
  const rows = doc.pods.map((p) => el("tr", {class: "restart-" + p.outcome},
    el("td", {}, p.pod + (p.podLevel ? " (pod-level)" : "")),
    el("td", {}, RESTART_MARK[p.outcome] || p.outcome),
    el("td", {}, p.before.cpus || "-"),
    el("td", {}, p.after ? (p.after.cpus || "-") : "-"),
    el("td", {}, p.before.numaNodes.join(",") || "-"),
    el("td", {}, p.after ? (p.after.numaNodes.join(",") || "-") : "-"),
    el("td", {}, p.reason ? p.reason + ": " + p.message : "")));
  const t = doc.totals;
  const lines = [
    `${t.pods} pods: ${t.kept} kept, ${t.moved} moved, ${t.rejected} rejected, ${t.unknown} unknown`,
    `CPUs ${t.cpus}: ${t.freeCpus} free, ${t.cpusHeldByRunningPods} held by running pods, ` +
      `${t.cpusHeldByRejectedPods} held by rejected pods, ${t.cpusTakenByNobody} taken by nobody` +
      (t.cpusTakenByNobody ? ` (${t.cpusTakenByNobodyList})` : ""),
    doc.nextStart.starts ? "the kubelet starts again from the state left"
      : "the next kubelet start fails: " + doc.nextStart.message,
  ];
  const replay = el("details", {}, el("summary", {}, "the restart as a scenario (podnuma simulate replays it)"),
    el("pre", {class: "desc", id: "restart-scenario"}, JSON.stringify(doc.scenario, null, 2)));
  return [
    el("div", {class: "table-wrap"}, el("table", {class: "whatif-table", id: "restart-table"},
      el("thead", {}, head), el("tbody", {}, rows))),
    el("ul", {class: "why", id: "restart-totals"}, lines.map((l) => el("li", {}, l))),
    ...(doc.notes.length ? [el("ul", {class: "why hint"}, doc.notes.map((n) => el("li", {}, n)))] : []),
    replay,
  ];
}

// compare / advise: each form alone on the node, then a kubelet restart
function restartRiskView(doc) {
  const risks = doc.restart || [];
  if (!risks.length) return [];
  const label = (r) => (r.form === "podLevel" ? "pod-level" : "per-container") + ", scope " + r.scope;
  const names = podLabels(doc.pods || []);
  return [
    el("h3", {}, "After a kubelet restart (v1.37.2, kubernetes#140989)"),
    el("ul", {class: "why", id: "restart-risks"}, risks.map((r) =>
      el("li", {class: "restart-" + r.outcome}, (names[r.podIndex] ?? r.pod) + " (" + label(r) + "): " + r.summary))),
  ];
}

async function runRestart() {
  const body = $("restart-body");
  if (!state.text) {
    body.replaceChildren(el("div", {class: "error"}, "run a scenario first"));
    return;
  }
  body.replaceChildren(el("p", {class: "busy"}, "restarting…"));
  try {
    const doc = await api("/api/restart" + qs({name: state.name}), {body: state.text});
    body.replaceChildren(...restartView(doc));
  } catch (e) {
    body.replaceChildren(el("div", {class: "error"}, "error: " + e.message));
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("run-restart").addEventListener("click", runRestart);
});
