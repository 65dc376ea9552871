// Flint dashboard: a hash router plus one function per view. No framework and
// no build step; the files are compiled into the Flint binary as they are.
'use strict';

const POLL_MS = 2000;
const TRACE_PAGE = 1000;      // records asked for per /trace request
const TRACE_MAX_PAGES = 5;    // catch-up requests per poll, so one poll stays short
const TRACE_KEEP = 2000;      // records the timeline keeps in memory
const TERMINAL_STATES = new Set(['FINISHED', 'FAILED', 'CANCELED']);
// Every outcome but ok (trace_recorder's names: rejected, malformed, unknown_method, failed,
// timeout, unreachable).
const isBad = (outcome) => outcome !== 'ok';

// ---------------------------------------------------------------- DOM helpers

const SVG_NS = 'http://www.w3.org/2000/svg';

function setAttrs(node, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? '' : value);
  }
}

// Children are appended as nodes or text, never parsed as HTML, so names and
// exception texts coming from the cluster cannot inject markup.
function appendKids(node, kids) {
  for (const kid of kids.flat(Infinity)) {
    if (kid == null || kid === false) continue;
    node.append(kid instanceof Node ? kid : String(kid));
  }
  return node;
}

function h(tag, attrs, ...kids) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  return appendKids(node, kids);
}

function s(tag, attrs, ...kids) {
  const node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  return appendKids(node, kids);
}

function card(title, ...kids) {
  return h('section', { class: 'card' }, title && h('h3', {}, title), kids);
}

// columns: [header, row => cell content, optional cell class]
function table(id, columns, rows, rowAttrs = () => ({})) {
  const head = h('tr', {}, columns.map(([label]) => h('th', {}, label)));
  const body = rows.length
    ? rows.map((row) => h('tr', rowAttrs(row),
      columns.map(([, cell, cls]) => h('td', { class: cls }, cell(row)))))
    : h('tr', {}, h('td', { colspan: columns.length, class: 'empty' }, 'No data'));
  return h('table', { id, class: 'table' }, h('thead', {}, head), h('tbody', {}, body));
}

function figures(id, items) {
  return h('div', { id, class: 'figures' }, items.map(([label, value]) =>
    h('div', { class: 'figure' }, h('div', { class: 'figure-value' }, value),
      h('div', { class: 'figure-label' }, label))));
}

function badge(status) {
  const st = String(status || 'UNKNOWN').toUpperCase();
  return h('span', { class: `badge st-${st}` }, st);
}

// ------------------------------------------------------------------ formatting

const pad = (n, width = 2) => String(n).padStart(width, '0');

function fmtTime(ms) {
  if (ms == null || ms < 0) return '-';
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function fmtDuration(ms) {
  if (ms == null || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  let sec = Math.floor(ms / 1000);
  const parts = [[86400, 'd'], [3600, 'h'], [60, 'm'], [1, 's']].map(([unit, name]) => {
    const n = Math.floor(sec / unit);
    sec -= n * unit;
    return [n, name];
  });
  const first = parts.findIndex(([n]) => n > 0);
  return parts.slice(first, first + 2).map(([n, name]) => `${n}${name}`).join(' ');
}

function fmtCount(n) {
  return typeof n === 'number' ? n.toLocaleString('en-US') : '-';
}

function fmtBytes(n) {
  if (typeof n !== 'number' || n < 0) return '-';
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return `${i ? n.toFixed(1) : n} ${units[i]}`;
}

// Trace times are microseconds. Wall-clock stamps show as a clock time; small
// values (a monotonic clock) as seconds since that clock's start.
function fmtMicros(us) {
  if (typeof us !== 'number') return '-';
  if (us < 1e14) return `+${(us / 1e6).toFixed(3)} s`;
  const d = new Date(us / 1000);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

// ------------------------------------------------------------- REST + errors

// Resolves to the parsed JSON body; rejects with the server's {"errors": [...]}
// text for a non-2xx answer so the banner shows what the cluster said.
async function api(path, options) {
  let res;
  try {
    res = await fetch(path, options);
  } catch (e) {
    throw new Error(`${path}: ${e.message}`);
  }
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    if (res.ok) throw new Error(`${path}: the answer is not JSON`);
  }
  if (!res.ok) {
    const errors = body && Array.isArray(body.errors) ? body.errors : [];
    throw new Error(errors.length ? errors.join('; ') : `${path}: HTTP ${res.status}`);
  }
  return body;
}

const banner = document.getElementById('error-banner');

// source 'poll' errors are cleared by the next good poll; 'action' errors
// (a failed cancel) stay until dismissed so a 2 s poll cannot hide them.
function showError(message, source = 'poll') {
  document.getElementById('error-text').textContent = message;
  banner.dataset.source = source;
  banner.hidden = false;
}

function clearError(source) {
  if (!source || banner.dataset.source === source) banner.hidden = true;
}

document.getElementById('error-dismiss').addEventListener('click', () => clearError());

// ---------------------------------------------------------------------- router

// One Page per shown route; leaving the route stops its polling, and answers
// that arrive afterwards land in detached DOM and report no errors.
class Page {
  constructor(root) {
    this.root = root;
    this.alive = true;
    this.timer = 0;
  }

  poll(refresh) {
    const tick = async () => {
      try {
        await refresh();
        if (this.alive) clearError('poll');
      } catch (e) {
        if (this.alive) showError(e.message);
      }
      if (this.alive) this.timer = setTimeout(tick, POLL_MS);
    };
    tick();
  }

  stop() {
    this.alive = false;
    clearTimeout(this.timer);
  }
}

const ROUTES = [
  [/^\/overview$/, 'overview', 'Overview', overviewView],
  [/^\/task-manager$/, 'task-manager', 'Task Managers', taskManagerView],
  [/^\/timeline$/, 'timeline', 'Message timeline', timelineView],
  [/^\/job\/(running|completed)\/([^/]+)(?:\/([a-z]+))?$/, 'overview', 'Job', jobView],
];

let currentPage = null;

function route() {
  const path = location.hash.replace(/^#/, '') || '/overview';
  for (const [pattern, navKey, title, view] of ROUTES) {
    const match = path.match(pattern);
    if (!match) continue;
    if (currentPage) currentPage.stop();
    clearError();
    const root = document.getElementById('view');
    root.replaceChildren();
    document.getElementById('page-title').textContent = title;
    for (const link of document.querySelectorAll('#nav a')) {
      link.classList.toggle('active', link.dataset.route === navKey);
    }
    currentPage = new Page(root);
    view(currentPage, ...match.slice(1).map((p) => p && decodeURIComponent(p)));
    return;
  }
  location.replace('#/overview');
}

// --------------------------------------------------------------------- overview

function overviewView(page) {
  const cluster = h('div');
  const running = h('div');
  const completed = h('div');
  page.root.append(card('Cluster', cluster), card('Running Jobs', running),
    card('Completed Jobs', completed));
  page.poll(async () => {
    const [ov, jobsOv] = await Promise.all([api('/overview'), api('/jobs/overview')]);
    cluster.replaceChildren(clusterFigures(ov));
    const jobs = (jobsOv.jobs || []).slice().sort((a, b) => b['start-time'] - a['start-time']);
    running.replaceChildren(jobsTable('jobs-running', 'running',
      jobs.filter((j) => !TERMINAL_STATES.has(j.state))));
    completed.replaceChildren(jobsTable('jobs-completed', 'completed',
      jobs.filter((j) => TERMINAL_STATES.has(j.state))));
  });
}

function clusterFigures(ov) {
  return h('div', {},
    figures('cluster-overview', [
      ['Task Managers', ov.taskmanagers],
      ['Total slots', ov['slots-total']],
      ['Available slots', ov['slots-available']],
      ['Running jobs', ov['jobs-running']],
      ['Finished jobs', ov['jobs-finished']],
      ['Cancelled jobs', ov['jobs-cancelled']],
      ['Failed jobs', ov['jobs-failed']],
    ]),
    h('p', { class: 'muted' }, `Version ${ov['flink-version'] || '-'} · commit ${ov['flink-commit'] || '-'}`));
}

function jobLink(kind, jid) {
  return `#/job/${kind}/${encodeURIComponent(jid)}/overview`;
}

function jobsTable(id, kind, jobs) {
  return table(id, [
    ['Job Name', (j) => h('a', { href: jobLink(kind, j.jid) }, j.name || j.jid)],
    ['Start Time', (j) => fmtTime(j['start-time']), 'time'],
    ['Duration', (j) => fmtDuration(j.duration), 'time'],
    ['End Time', (j) => fmtTime(j['end-time']), 'time'],
    ['Tasks', (j) => taskCounts(j.tasks)],
    ['Status', (j) => badge(j.state)],
  ], jobs, (j) => ({
    class: 'job-row clickable',
    'data-jid': j.jid,
    onclick: () => { location.hash = jobLink(kind, j.jid); },
  }));
}

// Task counts come lower-case in /jobs/overview and upper-case in vertices.
function taskCounts(tasks) {
  const entries = Object.entries(tasks || {}).filter(([key, n]) => key !== 'total' && n > 0);
  return h('span', { class: 'task-counts' }, entries.map(([key, n]) =>
    h('span', { class: `count st-${key.toUpperCase()}`, title: key.toUpperCase() }, n)));
}

// -------------------------------------------------------------------------- job

const JOB_TABS = [
  ['overview', 'Overview', jobGraphTab],
  ['exceptions', 'Exceptions', exceptionsTab],
  ['checkpoints', 'Checkpoints', checkpointsTab],
  ['timeline', 'Timeline', jobTimelineTab],
  ['why', 'Why not running', whyTab],
];

function jobView(page, kind, jid, tab = 'overview') {
  const current = JOB_TABS.find(([key]) => key === tab) || JOB_TABS[0];
  const base = `#/job/${kind}/${encodeURIComponent(jid)}`;
  const header = h('section', { id: 'job-header', class: 'card job-header' },
    h('div', { class: 'job-title' }, h('h2', {}, jid)));
  const tabs = h('nav', { class: 'tabs' }, JOB_TABS.map(([key, label]) =>
    h('a', { href: `${base}/${key}`, class: key === current[0] ? 'active' : null, 'data-tab': key }, label)));
  const body = h('div', { class: 'tab-body', id: `tab-${current[0]}` });
  page.root.append(header, tabs, body);

  const cancel = { requested: false };
  const refreshTab = current[2](body, jid);
  page.poll(async () => {
    const job = await api(`/jobs/${encodeURIComponent(jid)}`);
    document.getElementById('page-title').textContent = job.name || jid;
    header.replaceChildren(...jobHeader(job, cancel));
    await refreshTab(job);
  });
}

function jobHeader(job, cancel) {
  const ended = job['end-time'] > 0;
  const meta = [
    ['ID', job.jid],
    ['Start Time', fmtTime(job['start-time'])],
    ended && ['End Time', fmtTime(job['end-time'])],
    ['Duration', fmtDuration(job.duration)],
  ].filter(Boolean);
  return [
    h('div', { class: 'job-title' }, h('h2', {}, job.name || job.jid), badge(job.state),
      !TERMINAL_STATES.has(job.state) && cancelButton(job.jid, cancel)),
    h('dl', { class: 'meta' }, meta.map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
  ];
}

// The header is rebuilt every poll, so whether a cancel was already sent
// lives in `cancel`, which outlives the button.
function cancelButton(jid, cancel) {
  const button = h('button', { id: 'cancel-job', class: 'danger', disabled: cancel.requested },
    cancel.requested ? 'Cancelling…' : 'Cancel Job');
  button.addEventListener('click', async () => {
    cancel.requested = true;
    button.disabled = true;
    button.textContent = 'Cancelling…';
    try {
      await api(`/jobs/${encodeURIComponent(jid)}?mode=cancel`, { method: 'PATCH' });
    } catch (e) {
      cancel.requested = false;
      button.disabled = false;
      button.textContent = 'Cancel Job';
      showError(e.message, 'action');
    }
  });
  return button;
}

// ------------------------------------------------------------ job graph tab

function jobGraphTab(body, jid) {
  const graph = h('div', { class: 'graph-scroll', id: 'job-graph' });
  const vertices = h('div');
  const subtasks = h('div', { id: 'subtasks-panel' });
  body.append(card(null, graph), card('Vertices', vertices), subtasks);
  const state = { job: null, bp: {}, selected: null };

  const draw = () => {
    graph.replaceChildren(jobGraph(state.job, state.bp, state.selected, select));
    vertices.replaceChildren(vertexTable(state.job.vertices || [], state.bp, state.wm || {}, state.selected, select));
  };
  const loadSubtasks = async () => {
    if (!state.selected) return;
    const vid = state.selected;
    const detail = await api(`/jobs/${encodeURIComponent(jid)}/vertices/${encodeURIComponent(vid)}`);
    if (vid === state.selected) subtasks.replaceChildren(subtaskCard(detail, state.bp[vid]));
  };
  // A click answers at once instead of waiting for the next poll.
  function select(vid) {
    state.selected = vid;
    draw();
    loadSubtasks().catch((e) => showError(e.message));
  }

  return async (job) => {
    state.bp = await backpressureOf(jid, job.vertices || []);
    state.wm = await watermarksOf(jid, job.vertices || []);
    state.job = job;
    draw();
    await loadSubtasks();
  };
}

// Backpressure is a nice-to-have per vertex: a vertex whose sample fails shows
// "n/a" rather than turning the whole page into an error.
async function backpressureOf(jid, vertices) {
  const answers = await Promise.all(vertices.map((v) =>
    api(`/jobs/${encodeURIComponent(jid)}/vertices/${encodeURIComponent(v.id)}/backpressure`)
      .catch(() => null)));
  return Object.fromEntries(vertices.map((v, i) => [v.id, answers[i]]));
}

// Flink's "Low Watermark" of a vertex: the lowest currentInputWatermark of its
// subtasks; Long.MIN_VALUE (no watermark yet) shows as "No Watermark".
async function watermarksOf(jid, vertices) {
  const answers = await Promise.all(vertices.map((v) =>
    api(`/jobs/${encodeURIComponent(jid)}/vertices/${encodeURIComponent(v.id)}/watermarks`)
      .catch(() => null)));
  return Object.fromEntries(vertices.map((v, i) => [v.id, lowWatermark(answers[i])]));
}

const NO_WATERMARK = '-9223372036854775808';

function lowWatermark(list) {
  if (!Array.isArray(list) || !list.length) return null;
  let low = null;
  for (const m of list) {
    if (m.value === NO_WATERMARK) return NO_WATERMARK;
    const v = BigInt(m.value);
    if (low === null || v < low) low = v;
  }
  return low === null ? null : low.toString();
}

function fmtWatermark(w) {
  if (w === null || w === undefined) return '-';
  if (String(w) === NO_WATERMARK) return 'No Watermark';
  return `${w} (${new Date(Number(w)).toISOString()})`;
}

function bpLevel(bp) {
  return (bp && bp.backpressureLevel) || 'n/a';
}

const BOX = { w: 260, h: 104, gapX: 110, gapY: 36, margin: 24 };

// Layer = longest path from a source, so every edge points rightwards; within
// a layer nodes are ordered by the mean row of their inputs to limit crossings.
function layoutGraph(nodes) {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const inputsOf = (n) => (n.inputs || []).filter((i) => byId.has(i.id));
  const layer = new Map();
  const depth = (id, visiting = new Set()) => {
    if (layer.has(id)) return layer.get(id);
    if (visiting.has(id)) return 0; // guards against a malformed cyclic plan
    visiting.add(id);
    const ins = inputsOf(byId.get(id));
    const d = ins.length ? 1 + Math.max(...ins.map((i) => depth(i.id, visiting))) : 0;
    layer.set(id, d);
    return d;
  };
  nodes.forEach((n) => depth(n.id));

  const columns = [];
  for (const n of nodes) {
    const l = layer.get(n.id);
    columns[l] = columns[l] || [];
    columns[l].push(n);
  }
  const row = new Map();
  for (const column of columns) {
    const key = (n) => {
      const rows = inputsOf(n).map((i) => row.get(i.id));
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : 0;
    };
    column.sort((a, b) => key(a) - key(b));
    column.forEach((n, i) => row.set(n.id, i));
  }

  const tallest = Math.max(...columns.map((c) => c.length));
  const pos = new Map();
  columns.forEach((column, l) => {
    const offset = (tallest - column.length) * (BOX.h + BOX.gapY) / 2;
    column.forEach((n, i) => pos.set(n.id, {
      x: BOX.margin + l * (BOX.w + BOX.gapX),
      y: BOX.margin + offset + i * (BOX.h + BOX.gapY),
    }));
  });
  return {
    pos,
    width: 2 * BOX.margin + columns.length * (BOX.w + BOX.gapX) - BOX.gapX,
    height: 2 * BOX.margin + tallest * (BOX.h + BOX.gapY) - BOX.gapY,
  };
}

// Plan nodes carry the edges, vertices the live figures; a job without a
// plan still gets its vertices drawn, just unconnected.
function jobGraph(job, bp, selected, select) {
  const vertices = new Map((job.vertices || []).map((v) => [v.id, v]));
  const nodes = job.plan && Array.isArray(job.plan.nodes) && job.plan.nodes.length
    ? job.plan.nodes
    : [...vertices.values()].map((v) => ({ id: v.id, parallelism: v.parallelism, inputs: [] }));
  if (!nodes.length) return h('p', { class: 'muted' }, 'The job has no vertices.');
  const { pos, width, height } = layoutGraph(nodes);
  const edges = nodes.flatMap((n) => (n.inputs || []).filter((i) => pos.has(i.id))
    .map((i) => graphEdge(i, n.id, pos)));
  const boxes = nodes.map((n) => vertexBox(n, vertices.get(n.id), bp[n.id], pos.get(n.id),
    n.id === selected, select));
  return s('svg', { class: 'job-graph', width, height, viewBox: `0 0 ${width} ${height}` },
    s('defs', {}, s('marker', {
      id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5,
      markerWidth: 8, markerHeight: 8, orient: 'auto-start-reverse',
    }, s('path', { d: 'M0,0 L10,5 L0,10 z', class: 'arrow-head' }))),
    edges, boxes);
}

function graphEdge(input, toId, pos) {
  const a = pos.get(input.id);
  const b = pos.get(toId);
  const x1 = a.x + BOX.w;
  const y1 = a.y + BOX.h / 2;
  const x2 = b.x;
  const y2 = b.y + BOX.h / 2;
  const mx = (x1 + x2) / 2;
  const label = input.ship_strategy || '';
  const labelWidth = label.length * 8 + 12;
  return s('g', { class: 'edge', 'data-from': input.id, 'data-to': toId, 'data-ship-strategy': label },
    s('path', { d: `M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}`, 'marker-end': 'url(#arrow)' }),
    label && s('rect', { x: mx - labelWidth / 2, y: (y1 + y2) / 2 - 9, width: labelWidth, height: 18, rx: 3 }),
    label && s('text', { x: mx, y: (y1 + y2) / 2 + 4, 'text-anchor': 'middle' }, label));
}

// Splits a name into at most `lines` lines of about `width` characters.
function wrapText(text, width, lines) {
  const out = [''];
  for (const word of text.split(/\s+/)) {
    const last = out[out.length - 1];
    if (!last || last.length + word.length + 1 <= width) out[out.length - 1] = last ? `${last} ${word}` : word;
    else out.push(word);
  }
  if (out.length > lines) out.splice(lines - 1, out.length, `${out.slice(lines - 1).join(' ')}`);
  return out.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
}

function vertexBox(node, vertex, bp, at, isSelected, select) {
  const status = ((vertex && vertex.status) || 'UNKNOWN').toUpperCase();
  const name = (vertex && vertex.name) || node.operator || node.description || node.id;
  const metrics = (vertex && vertex.metrics) || {};
  const level = bpLevel(bp);
  const lines = wrapText(name, 28, 2);
  const text = (y, cls, content) => s('text', { x: 16, y, class: cls }, content);
  return s('g', {
    class: `vertex st-${status}${isSelected ? ' selected' : ''}`,
    'data-vertex-id': node.id, 'data-status': status, 'data-backpressure': level,
    transform: `translate(${at.x},${at.y})`, onclick: () => select(node.id),
  },
  s('title', {}, name),
  s('rect', { class: 'box', width: BOX.w, height: BOX.h, rx: 4 }),
  s('rect', { class: 'status-strip', width: 6, height: BOX.h, rx: 2 }),
  lines.map((line, i) => text(20 + i * 16, 'name', line)),
  text(58, 'status', `${status} · parallelism ${node.parallelism ?? (vertex && vertex.parallelism) ?? '-'}`),
  text(76, 'figures', `in ${fmtCount(metrics['read-records'])} · out ${fmtCount(metrics['write-records'])} records`),
  text(94, `bp bp-${level}`, `backpressure: ${level.toUpperCase()}`));
}

function vertexTable(vertices, bp, wm, selected, select) {
  return table('vertices', [
    ['Name', (v) => v.name],
    ['Status', (v) => badge(v.status)],
    ['Parallelism', (v) => v.parallelism, 'num'],
    ['Bytes received', (v) => fmtBytes((v.metrics || {})['read-bytes']), 'num'],
    ['Records received', (v) => fmtCount((v.metrics || {})['read-records']), 'num'],
    ['Bytes sent', (v) => fmtBytes((v.metrics || {})['write-bytes']), 'num'],
    ['Records sent', (v) => fmtCount((v.metrics || {})['write-records']), 'num'],
    ['Backpressure', (v) => h('span', { class: `bp bp-${bpLevel(bp[v.id])}` }, bpLevel(bp[v.id]).toUpperCase())],
    ['Low Watermark', (v) => h('span', { class: 'watermark', 'data-watermark': wm[v.id] ?? '' }, fmtWatermark(wm[v.id]))],
    ['Start Time', (v) => fmtTime(v['start-time']), 'time'],
    ['Duration', (v) => fmtDuration(v.duration), 'time'],
    ['Tasks', (v) => taskCounts(v.tasks)],
  ], vertices, (v) => ({
    class: `vertex-row clickable${v.id === selected ? ' selected' : ''}`,
    'data-vertex-id': v.id,
    onclick: () => select(v.id),
  }));
}

function subtaskCard(detail, bp) {
  const ratio = new Map(((bp && bp.subtasks) || []).map((t) => [t.subtask, t]));
  const metric = (t, key) => fmtCount((t.metrics || {})[key]);
  return card(`Subtasks of ${detail.name || detail.id}`, table('subtasks', [
    ['Subtask', (t) => t.subtask, 'num'],
    ['Status', (t) => badge(t.status)],
    ['Attempt', (t) => t.attempt, 'num'],
    ['Host', (t) => t.host],
    ['TaskManager', (t) => t['taskmanager-id']],
    ['Start Time', (t) => fmtTime(t['start-time']), 'time'],
    ['Duration', (t) => fmtDuration(t.duration), 'time'],
    ['Records received', (t) => metric(t, 'read-records'), 'num'],
    ['Records sent', (t) => metric(t, 'write-records'), 'num'],
    ['Backpressure', (t) => {
      const r = ratio.get(t.subtask);
      return r ? `${r.backpressureLevel} (${Math.round((r.ratio || 0) * 100)}%)` : '-';
    }],
  ], detail.subtasks || [], (t) => ({ class: 'subtask-row', 'data-subtask': t.subtask })));
}

// ------------------------------------------------------- exceptions, checkpoints

function exceptionsTab(body, jid) {
  return async () => {
    const ex = await api(`/jobs/${encodeURIComponent(jid)}/exceptions`);
    const all = ex['all-exceptions'] || [];
    body.replaceChildren(
      card('Root Exception', ex['root-exception']
        ? [h('p', { class: 'muted' }, fmtTime(ex.timestamp)), h('pre', { id: 'root-exception' }, ex['root-exception'])]
        : h('p', { id: 'root-exception', class: 'muted' }, 'No exception.')),
      card('Exception History', table('exceptions', [
        ['Time', (e) => fmtTime(e.timestamp), 'time'],
        ['Task', (e) => e.task || '-'],
        ['Location', (e) => e.location || '-'],
        ['Exception', (e) => h('details', {}, h('summary', {}, firstLine(e.exception)), h('pre', {}, e.exception))],
      ], all, () => ({ class: 'exception-row' })),
      ex.truncated && h('p', { class: 'muted' }, 'The list is truncated.')));
  };
}

function firstLine(text) {
  return String(text || '').split('\n')[0];
}

function checkpointsTab(body, jid) {
  return async () => {
    const cp = await api(`/jobs/${encodeURIComponent(jid)}/checkpoints`);
    const counts = cp.counts || {};
    const latest = (cp.latest || {}).completed;
    body.replaceChildren(
      card('Checkpoint Counts', figures('checkpoint-counts', [
        ['Triggered', counts.total], ['In progress', counts.in_progress],
        ['Completed', counts.completed], ['Failed', counts.failed], ['Restored', counts.restored],
      ].map(([k, v]) => [k, v ?? 0]))),
      card('Latest Completed Checkpoint', latest
        ? h('dl', { id: 'latest-checkpoint', class: 'meta' },
          [['ID', latest.id], ['End to end duration', fmtDuration(latest.end_to_end_duration)],
            ['Checkpointed data size', fmtBytes(latest.state_size)],
            ['Path', latest.external_path || '-']].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))
        : h('p', { id: 'latest-checkpoint', class: 'muted' }, 'No checkpoint has completed yet.')),
      card('History', table('checkpoint-history', [
        ['ID', (c) => c.id, 'num'],
        ['Status', (c) => badge(c.status)],
        ['Trigger Time', (c) => fmtTime(c.trigger_timestamp), 'time'],
        ['End to end duration', (c) => fmtDuration(c.end_to_end_duration), 'time'],
        ['Data size', (c) => fmtBytes(c.state_size)],
        ['Acknowledged', (c) => `${c.num_acknowledged_subtasks ?? '-'}/${c.num_subtasks ?? '-'}`],
      ], cp.history || [])));
  };
}

// ------------------------------------------------------------------ why tab

function whyTab(body, jid) {
  return async () => {
    const why = await api(`/jobs/${encodeURIComponent(jid)}/why`);
    const reasons = why.reasons || [];
    body.replaceChildren(
      card('Why is this job not running?',
        reasons.length
          ? h('ul', { id: 'why-reasons', class: 'why-reasons' }, reasons.map((r) => h('li', { class: 'why-reason' }, r)))
          : h('p', { id: 'why-reasons', class: 'all-running' }, 'All tasks are running.'),
        figures('why-figures', [
          ['State', badge(why.state)],
          ['Tasks running', `${why['tasks-running'] ?? '-'} / ${why.tasks ?? '-'}`],
          ['Slots assigned', `${why['slots-assigned'] ?? '-'} / ${why['slots-needed'] ?? '-'}`],
          ['Registered TaskManagers', why['registered-taskmanagers'] ?? '-'],
        ])),
      card('Pending slot requests', table('pending-slot-requests', [
        ['Request', (r) => r.request],
        ['Waiting', (r) => `waiting ${Math.round((r['age-ms'] || 0) / 1000)} s`],
      ], why['pending-slot-requests'] || [], (r) => ({ class: 'pending-request', 'data-request': r.request }))),
      card('Refused calls', traceTable('refused-calls', why['refused-calls'] || [])),
      card('Overdue heartbeats', table('overdue-heartbeats', [
        ['Target', (r) => r.target],
        ['Last heard', (r) => `${fmtDuration(r['last-ms-ago'])} ago`],
      ], why['overdue-heartbeats'] || [])),
      card('Watermarks', table('why-watermarks', [
        ['Vertex', (r) => r.vertex],
        ['Low watermark', (r) => fmtWatermark(String(r['low-watermark']))],
        ['Idle subtasks', (r) => `${r['idle-subtasks']} / ${r.subtasks}`],
        ['Late records dropped', (r) => fmtCount(r['late-records-dropped']), 'num'],
        ['Held back by', (r) => r['held-back-by']
          ? `subtask ${r['lowest-subtask'] + 1}: ${r['held-back-by']}` : '-'],
      ], why.watermarks || [])));
  };
}

function traceTable(id, records) {
  return table(id, [
    ['Seq', (r) => r.seq, 'num'],
    ['Time', (r) => fmtMicros(r.time_us), 'time'],
    ['From', (r) => r.from],
    ['To', (r) => r.to],
    ['Method', (r) => r.method],
    ['Outcome', (r) => h('span', { class: `outcome outcome-${r.outcome}` }, r.outcome)],
    ['Detail', (r) => r.detail || ''],
  ], records);
}

// ------------------------------------------------------------ task managers

function taskManagerView(page) {
  const list = h('div');
  page.root.append(card('Task Managers', list));
  page.poll(async () => {
    const answer = await api('/taskmanagers');
    list.replaceChildren(table('taskmanagers', [
      ['ID', (t) => t.id],
      ['Path', (t) => t.path],
      ['Data Port', (t) => t.dataPort, 'num'],
      ['Slots', (t) => t.slotsNumber, 'num'],
      ['Free Slots', (t) => t.freeSlots, 'num'],
      ['Last Heartbeat', (t) => heartbeatAge(t.timeSinceLastHeartbeat)],
      ['CPU Cores', (t) => (t.hardware || {}).cpuCores ?? '-', 'num'],
      ['Physical Memory', (t) => fmtBytes((t.hardware || {}).physicalMemory)],
    ], answer.taskmanagers || [], (t) => ({ class: 'taskmanager-row', 'data-tm-id': t.id })));
  });
}

// Despite its name, Flink fills timeSinceLastHeartbeat with the epoch time of
// the last heartbeat; accept both that and a plain age in milliseconds.
function heartbeatAge(value) {
  if (typeof value !== 'number') return '-';
  const age = value > 1e12 ? Date.now() - value : value;
  return `${fmtDuration(Math.max(0, age))} ago`;
}

// ----------------------------------------------------------------- timeline

function timelineView(page) {
  const box = h('div');
  page.root.append(card('JobManager message timeline', box));
  page.poll(messageTimeline(box, ''));
}

function jobTimelineTab(body, jid) {
  const box = h('div');
  body.append(card('Messages of this job', box));
  return messageTimeline(box, jid);
}

// Builds the filters, diagram and detail panel inside `box` and returns the
// poll function. A job timeline asks the server for that job's records only;
// the job text filter narrows further on the client.
function messageTimeline(box, jid) {
  const state = { records: [], next: 0, missed: 0, selected: null, drawn: false };
  const endpoint = h('select', { id: 'filter-endpoint' }, h('option', { value: '' }, 'all'));
  const method = h('input', { id: 'filter-method', type: 'search', placeholder: 'method contains…' });
  const job = h('input', { id: 'filter-job', type: 'search', placeholder: 'job id contains…', value: jid || null });
  // REST's and the metrics collector's own queries (the recorder marks them `monitoring`): this
  // dashboard polls several times a second, which would bury the cluster's messages.
  const monitoring = h('input', { id: 'filter-monitoring', type: 'checkbox' });
  const info = h('span', { class: 'muted', id: 'timeline-info' });
  const scroller = h('div', { class: 'seq-scroll', id: 'sequence-diagram' });
  const detail = h('div', { id: 'message-detail', class: 'message-detail', hidden: true });
  box.append(
    h('div', { class: 'filters' },
      h('label', {}, 'Endpoint ', endpoint), h('label', {}, 'Method ', method),
      h('label', {}, 'Job ', job), h('label', {}, monitoring, ' show dashboard and metrics queries'), info),
    h('p', { class: 'muted legend' }, 'Red: rejected (fencing), failed, timed out, unreachable or malformed. Dashed: tell (no reply expected). Click an arrow for details.'),
    scroller, detail);

  const redraw = () => drawTimeline(state, { endpoint, method, job, monitoring, info, scroller });
  for (const input of [endpoint, method, job, monitoring]) input.addEventListener('input', redraw);
  state.pick = (record) => {
    state.selected = record.seq;
    showMessageDetail(detail, record);
    redraw();
  };

  return async () => {
    // Redraw only on news, so a reader's scroll position and hover survive polls.
    const fresh = await pullTrace(state, jid);
    if (fresh || !state.drawn) redraw();
    state.drawn = true;
  };
}

// Reads /trace from where the last poll stopped, a few pages at most, and
// keeps only the newest TRACE_KEEP records. Resolves to the number read.
async function pullTrace(state, jid) {
  let read = 0;
  for (let i = 0; i < TRACE_MAX_PAGES; i++) {
    const query = `/trace?from=${state.next}&max=${TRACE_PAGE}${jid ? `&job=${encodeURIComponent(jid)}` : ''}`;
    const answer = await api(query);
    const records = answer.records || [];
    state.records.push(...records);
    state.missed += answer.missed || 0;
    if (typeof answer.next_sequence === 'number') state.next = answer.next_sequence;
    else if (records.length) state.next = records[records.length - 1].seq + 1;
    read += records.length;
    if (records.length < TRACE_PAGE) break;
  }
  if (state.records.length > TRACE_KEEP) state.records.splice(0, state.records.length - TRACE_KEEP);
  return read;
}

function filterRecords(records, endpoint, method, job, monitoring) {
  const m = method.toLowerCase();
  return records.filter((r) =>
    (monitoring || !r.monitoring) &&
    (!endpoint || r.from === endpoint || r.to === endpoint) &&
    (!m || String(r.method || '').toLowerCase().includes(m)) &&
    (!job || String(r.from).includes(job) || String(r.to).includes(job)))
    .sort((a, b) => a.seq - b.seq);
}

function drawTimeline(state, ui) {
  const monitoring = ui.monitoring.checked;
  const kept = monitoring ? state.records : state.records.filter((r) => !r.monitoring);
  syncEndpointOptions(ui.endpoint, kept);
  const shown = filterRecords(state.records, ui.endpoint.value, ui.method.value.trim(), ui.job.value.trim(), monitoring);
  const hidden = state.records.length - kept.length;
  ui.info.textContent = `${shown.length} of ${state.records.length} records` +
    (hidden ? ` · ${hidden} dashboard/metrics queries hidden` : '') +
    (state.missed ? ` · ${state.missed} missed (trace buffer overrun)` : '');
  // Follow new messages only while the reader is at the bottom already.
  const { scrollTop, clientHeight, scrollHeight } = ui.scroller;
  const following = scrollTop + clientHeight >= scrollHeight - 30;
  ui.scroller.replaceChildren(...sequenceDiagram(shown, state.selected, state.pick));
  ui.scroller.scrollTop = following ? ui.scroller.scrollHeight : scrollTop;
}

function syncEndpointOptions(select, records) {
  const names = orderEndpoints(records);
  const have = [...select.options].slice(1).map((o) => o.value);
  if (have.join('\n') === names.join('\n')) return;
  const value = select.value;
  select.replaceChildren(h('option', { value: '' }, 'all'), ...names.map((n) => h('option', { value: n }, n)));
  select.value = names.includes(value) ? value : '';
}

// Lifelines in the order a reader expects: client, dispatcher and resource
// manager first, then per-job endpoints, then task executors.
const ENDPOINT_RANK = ['flint-cli', 'dispatcher', 'resource_manager', 'job_master', 'slot_pool', 'task_executor'];

function orderEndpoints(records) {
  const names = new Set();
  for (const r of records) names.add(r.from || '?').add(r.to || '?');
  const rank = (name) => {
    const i = ENDPOINT_RANK.indexOf(name.split('/')[0]);
    return i < 0 ? ENDPOINT_RANK.length : i;
  };
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

const SEQ = { gutter: 130, col: 180, row: 26, head: 34 };

// Returns [header svg, body svg]; the header is sticky in the scroll box so
// the lifeline names stay visible while scrolling through a long diagram.
function sequenceDiagram(records, selected, pick) {
  if (!records.length) return [h('p', { class: 'muted empty' }, 'No messages recorded yet.')];
  const names = orderEndpoints(records);
  const x = new Map(names.map((n, i) => [n, SEQ.gutter + i * SEQ.col + SEQ.col / 2]));
  const width = SEQ.gutter + names.length * SEQ.col;
  const height = records.length * SEQ.row + 10;
  const header = s('svg', { class: 'seq-head', width, height: SEQ.head },
    names.map((n) => s('g', { class: 'lifeline-head', 'data-endpoint': n },
      s('title', {}, n),
      s('rect', { x: x.get(n) - SEQ.col / 2 + 6, y: 4, width: SEQ.col - 12, height: SEQ.head - 8, rx: 3 }),
      s('text', { x: x.get(n), y: SEQ.head / 2 + 4, 'text-anchor': 'middle' }, clip(n, 22)))));
  const body = s('svg', { class: 'seq-body', width, height },
    s('defs', {}, ['seq-arrow', 'seq-arrow-bad'].map((id) => s('marker', {
      id, viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto',
    }, s('path', { d: 'M0,0 L10,5 L0,10 z' })))),
    names.map((n) => s('line', { class: 'lifeline', 'data-endpoint': n, x1: x.get(n), x2: x.get(n), y1: 0, y2: height })),
    records.map((r, i) => messageArrow(r, x, 10 + i * SEQ.row, width, r.seq === selected, pick)));
  return [header, body];
}

function clip(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

function messageArrow(r, x, top, width, isSelected, pick) {
  const x1 = x.get(r.from || '?');
  const x2 = x.get(r.to || '?');
  const y = top + SEQ.row - 8;
  const bad = isBad(r.outcome);
  // Markers do not take their line's colour, so failures use their own marker.
  const marker = `url(#seq-arrow${bad ? '-bad' : ''})`;
  const line = x1 === x2
    ? s('path', { d: `M${x1},${y - 8} h30 v8 h-28`, class: 'arrow', 'marker-end': marker })
    : s('line', { x1, y1: y, x2: x2 + (x2 > x1 ? -2 : 2), y2: y, class: 'arrow', 'marker-end': marker });
  const labelX = x1 === x2 ? x1 + 36 : (x1 + x2) / 2;
  return s('g', {
    class: `message${bad ? ' bad' : ''}${r.kind === 'tell' ? ' tell' : ''}${isSelected ? ' selected' : ''}`,
    'data-method': r.method, 'data-sequence': r.seq, 'data-outcome': r.outcome,
    onclick: () => pick(r),
  },
  s('title', {}, `${r.from} → ${r.to}: ${r.method} (${r.outcome})`),
  s('rect', { class: 'hit', x: 0, y: top, width, height: SEQ.row }),
  s('text', { class: 'gutter', x: 6, y }, `#${r.seq} ${fmtMicros(r.time_us)}`),
  line,
  s('text', { class: 'label', x: labelX, y: y - 4, 'text-anchor': x1 === x2 ? 'start' : 'middle' },
    r.method + (bad ? ` (${r.outcome})` : '')));
}

// Shows every field of the record, including ones this file does not know.
function showMessageDetail(panel, record) {
  const extra = { time: fmtMicros(record.time_us), latency: fmtDuration((record.latency_us || 0) / 1000) };
  panel.replaceChildren(
    h('div', { class: 'detail-head' },
      h('h3', {}, `Message #${record.seq}: ${record.method}`),
      h('button', { type: 'button', onclick: () => { panel.hidden = true; } }, 'Close')),
    h('dl', { class: 'meta detail-fields' },
      Object.entries(record).map(([k, v]) => [h('dt', {}, k),
        h('dd', { 'data-field': k }, typeof v === 'object' ? JSON.stringify(v) : String(v))]),
      Object.entries(extra).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])));
  panel.hidden = false;
  panel.scrollIntoView({ block: 'nearest' });
}

window.addEventListener('hashchange', route);
route();
