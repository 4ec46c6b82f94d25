// dsd console: a read-only client of the public protocol (mounted at ./api/) and of the
// admin listener's /buckets, /lineage and /metrics. No framework, no build step.
'use strict';

const API = 'api';
const TOKEN_KEY = 'dsd-console-token';
const PAGE = 50;           // rows per listing page
const TAIL_RECORDS = 50;   // records shown for JSON streams
const BYTES_SHOWN = 16384; // bytes shown for other streams
const LIVE_ROWS = 200;     // live tail rows kept

// ---- requests ----

function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

function authHeaders() {
  const t = token();
  return t ? { Authorization: 'Bearer ' + t } : {};
}

// request fetches url with the tab's token; a non-2xx answer throws an Error naming the
// server's error code and message.
async function request(url, opts) {
  const o = Object.assign({ cache: 'no-store' }, opts || {});
  o.headers = Object.assign(authHeaders(), o.headers || {});
  const res = await fetch(url, o);
  if (!res.ok) throw await httpError(res);
  return res;
}

async function httpError(res) {
  let msg = res.status + ' ' + res.statusText;
  try {
    const b = await res.json();
    if (b.error) msg = res.status + ' ' + b.error.code + ': ' + b.error.message;
    else if (b.reason) msg = res.status + ' ' + b.status + ': ' + b.reason;
  } catch (e) { /* no JSON body */ }
  if (res.status === 401) msg += ' (enter a token above)';
  const err = new Error(msg);
  err.status = res.status;
  return err;
}

const enc = encodeURIComponent;
function streamURL(b, s) { return API + '/' + enc(b) + '/' + enc(s); }

// ---- DOM helpers ----

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v);
  }
  for (const k of kids.flat()) if (k != null) e.append(k instanceof Node ? k : String(k));
  return e;
}

function table(cols, rows, cls) {
  return el('table', { class: cls },
    el('thead', {}, el('tr', {}, cols.map(c => el('th', { class: c.num ? 'num' : null }, c.title)))),
    el('tbody', {}, rows));
}

function kvTable(pairs) {
  return el('table', { class: 'kv' }, el('tbody', {},
    pairs.filter(p => p).map(([k, v]) => el('tr', {}, el('th', {}, k), el('td', {}, v)))));
}

function show(...nodes) {
  const v = document.getElementById('view');
  v.replaceChildren(...nodes);
}

function errorBox(err) { return el('div', { class: 'error' }, String(err.message || err)); }

function badge(text, cls) { return el('span', { class: 'badge ' + cls }, text); }

function crumbs(items) {
  const nav = document.getElementById('crumbs');
  const out = [];
  items.forEach(([text, href], i) => {
    if (i) out.push(el('span', { class: 'sep' }, '/'));
    out.push(href ? el('a', { href }, text) : el('span', {}, text));
  });
  nav.replaceChildren(...out);
}

function fmtTime(ms) {
  if (!ms) return '';
  return new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
}

function fmtBytes(n) {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : String(n)) + ' ' + u[i];
}

function fmtCount(n) { return Math.round(n).toLocaleString('en-US'); }

// ---- message rendering ----

function isTextType(ct) { return /^text\//i.test(ct) || isJSONType(ct); }
function isJSONType(ct) { return /^application\/json\b/i.test(ct || ''); }

function pretty(v) { return el('pre', {}, JSON.stringify(v, null, 2)); }

function hexDump(bytes, base) {
  const lines = [];
  for (let i = 0; i < bytes.length; i += 16) {
    const row = bytes.subarray(i, i + 16);
    const hex = Array.from(row, b => b.toString(16).padStart(2, '0')).join(' ');
    const asc = Array.from(row, b => (b >= 32 && b < 127 ? String.fromCharCode(b) : '.')).join('');
    lines.push((base + i).toString(16).padStart(8, '0') + '  ' + hex.padEnd(48) + ' |' + asc + '|');
  }
  return el('pre', { class: 'hex' }, lines.join('\n'));
}

// content renders bytes of a stream typed ct: JSON pretty-printed, text as is, other
// bytes as hex.
function content(bytes, ct) {
  const text = new TextDecoder().decode(bytes);
  if (isJSONType(ct)) {
    try { return pretty(JSON.parse(text)); } catch (e) { /* fall through */ }
  }
  if (isTextType(ct)) return el('pre', {}, text);
  return hexDump(bytes, 0);
}

// ---- server figures (/metrics) ----

const FIGURES = [
  ['dsd_buckets', 'Buckets', fmtCount],
  ['dsd_streams', 'Streams', fmtCount],
  ['dsd_live_readers', 'Live readers', fmtCount],
  ['dsd_appends_total', 'Appends', fmtCount],
  ['dsd_append_bytes_total', 'Appended', fmtBytes],
  ['dsd_http_request_duration_seconds_count', 'Requests', fmtCount],
  ['go_goroutines', 'Goroutines', fmtCount],
  ['process_resident_memory_bytes', 'Memory (RSS)', fmtBytes],
];

// parseMetrics sums the Prometheus text exposition's samples by metric name.
function parseMetrics(text) {
  const sums = {};
  for (const line of text.split('\n')) {
    if (!line || line[0] === '#') continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    sums[m[1]] = (sums[m[1]] || 0) + Number(m[3]);
  }
  return sums;
}

// figuresSoon refreshes the figures within half a second (after live activity), once.
let figuresTimer = null;
function figuresSoon() {
  if (!figuresTimer) figuresTimer = setTimeout(() => { figuresTimer = null; refreshFigures(); }, 500);
}

async function refreshFigures() {
  const box = document.getElementById('figures');
  try {
    const res = await request('../metrics');
    const sums = parseMetrics(await res.text());
    const figs = FIGURES.filter(([name]) => name in sums).map(([name, label, fmt]) =>
      el('div', { class: 'figure', 'data-metric': name },
        el('div', { class: 'v' }, fmt(sums[name])), el('div', { class: 'k' }, label)));
    if ('dsd_ready' in sums) {
      figs.unshift(el('div', { class: 'figure' },
        el('div', { class: 'v' }, sums.dsd_ready ? badge('ready', 'live') : badge('not ready', 'off')),
        el('div', { class: 'k' }, 'Server')));
    }
    box.replaceChildren(...figs);
  } catch (e) {
    box.replaceChildren(el('span', { class: 'muted' }, 'metrics: ' + e.message));
  }
}

// ---- views ----

// bucketsView: the landing page, every bucket the token may read (GET /buckets).
async function bucketsView(q) {
  crumbs([['buckets']]);
  const after = q.get('after') || '';
  const res = await request('../buckets?limit=' + PAGE + (after ? '&after=' + enc(after) : ''));
  const page = await res.json();
  const rows = page.buckets.map(b => el('tr', {},
    el('td', {}, el('a', { href: '#/b/' + enc(b.bucket_id) }, el('code', {}, b.bucket_id))),
    el('td', { class: 'num' }, fmtCount(b.streams)),
    el('td', {}, fmtTime(b.created_at_ms))));
  show(el('h1', {}, 'Buckets'),
    el('div', { class: 'card' },
      rows.length ? table([{ title: 'Bucket' }, { title: 'Streams', num: true }, { title: 'Created' }], rows, 'buckets')
        : el('p', { class: 'muted' }, 'No buckets yet. Create one with PUT /{bucket} on the public listener.'),
      pager(after ? '#/' : null, page.has_more ? '#/?after=' + enc(page.next_cursor) : null)));
}

function pager(first, next) {
  if (!first && !next) return null;
  return el('div', { class: 'pager' },
    first ? el('a', { href: first }, '« first page') : null,
    next ? el('a', { href: next, id: 'next-page' }, 'next page »') : null);
}

// bucketView: a bucket's streams (GET /{bucket}/streams), paged, filtered by prefix.
async function bucketView(bucket, q) {
  crumbs([['buckets', '#/'], [bucket]]);
  const prefix = q.get('prefix') || '';
  const after = q.get('after') || '';
  const base = API + '/' + enc(bucket);
  const [info, list] = await Promise.all([
    request(base).then(r => r.json()),
    request(base + '/streams?limit=' + PAGE + '&prefix=' + enc(prefix) + (after ? '&after=' + enc(after) : '')).then(r => r.json()),
  ]);
  const here = '#/b/' + enc(bucket) + '?prefix=' + enc(prefix);
  const input = el('input', { id: 'prefix', type: 'search', placeholder: 'stream id prefix', value: prefix });
  const form = el('form', { class: 'toolbar', onsubmit: e => { e.preventDefault(); location.hash = '#/b/' + enc(bucket) + '?prefix=' + enc(input.value); } },
    input, el('button', { type: 'submit' }, 'Filter'),
    el('span', { class: 'muted' }, fmtCount(info.streams) + ' streams, created ' + fmtTime(info.created_at_ms)));
  const rows = list.streams.map(s => el('tr', {},
    el('td', {}, el('a', { href: '#/s/' + enc(bucket) + '/' + enc(s.stream_id) }, el('code', {}, s.stream_id))),
    el('td', {}, el('code', {}, s.content_type)),
    el('td', {}, s.status === 'Closed' ? badge('closed', 'closed') : badge('open', 'open')),
    el('td', {}, el('code', {}, s.tail_offset)),
    el('td', {}, fmtTime(s.created_at_ms)),
    el('td', {}, fmtTime(s.last_write_at_ms))));
  show(el('h1', {}, 'Bucket ', el('code', {}, bucket)),
    el('div', { class: 'card' }, form,
      rows.length ? table([{ title: 'Stream' }, { title: 'Content type' }, { title: 'Status' }, { title: 'Tail offset' }, { title: 'Created' }, { title: 'Last write' }], rows, 'streams')
        : el('p', { class: 'muted' }, prefix ? 'No stream id starts with "' + prefix + '".' : 'No streams in this bucket.'),
      pager(after ? here : null, list.has_more ? here + '&after=' + enc(list.next_cursor) : null)));
}

// streamView: metadata (HEAD), attributes, fork parent, recent messages and a live tail.
async function streamView(bucket, stream) {
  crumbs([['buckets', '#/'], [bucket, '#/b/' + enc(bucket)], [stream]]);
  const url = streamURL(bucket, stream);
  let head;
  try {
    head = (await request(url, { method: 'HEAD' })).headers;
  } catch (e) {
    if (e.status !== 404 && e.status !== 410) throw e;
    show(el('div', { class: 'error' }, e.status + ': no stream ', el('code', {}, bucket + '/' + stream),
      e.status === 410 ? ' (deleted; forks still read its data). ' : ' (it does not exist or has expired). ',
      el('a', { href: '#/b/' + enc(bucket) }, 'Back to the bucket')));
    return null;
  }
  const [attrs, lineage] = await Promise.all([
    request(url + '/attrs').then(r => r.json()).catch(e => e),
    request('../lineage/' + enc(bucket) + '/' + enc(stream)).then(r => r.json()).catch(e => e),
  ]);
  const ct = head.get('Content-Type') || '';
  const closed = head.get('Stream-Closed') === 'true';
  const records = /json-record-coordinates-v1/.test(head.get('Stream-Extensions') || '') ? Number(head.get('Stream-Record-Next')) : null;
  const live = liveTail(url, ct, head.get('Stream-Next-Offset'), records, closed);
  show(el('h1', {}, 'Stream ', el('code', {}, bucket + '/' + stream)),
    el('div', { class: 'grid' },
      el('div', { class: 'card', id: 'meta' }, el('h2', {}, 'Metadata'), metadataTable(head, lineage)),
      el('div', { class: 'card', id: 'attrs' }, el('h2', {}, 'Attributes'), attrsTable(attrs))),
    el('div', { class: 'card', id: 'recent' }, el('h2', {}, 'Recent messages'), await recentMessages(url, head)),
    live.node);
  return live;
}

function metadataTable(h, lineage) {
  const code = v => el('code', {}, v);
  const first = h.get('Stream-Record-First');
  const ttl = h.get('Stream-TTL');
  let fork = el('span', { class: 'muted' }, lineage instanceof Error ? lineage.message : 'none');
  if (!(lineage instanceof Error) && lineage.forked_from) {
    fork = el('span', {}, code(lineage.forked_from), ' at offset ', code(lineage.fork_offset),
      lineage.fork_sub_offset ? ' + ' + lineage.fork_sub_offset : '');
  }
  return kvTable([
    ['Content type', code(h.get('Content-Type') || '')],
    ['Tail offset', code(h.get('Stream-Next-Offset') || '')],
    ['Status', h.get('Stream-Closed') === 'true' ? badge('closed', 'closed') : badge('open', 'open')],
    ['TTL', ttl ? ttl + ' s (sliding)' : el('span', { class: 'muted' }, 'none')],
    h.get('Stream-Expires-At') ? ['Expires at', h.get('Stream-Expires-At')] : null,
    first != null ? ['Records', 'first ' + first + ', next ' + h.get('Stream-Record-Next') + ' (' + fmtCount(h.get('Stream-Record-Next') - first) + ' retained)'] : null,
    ['Snapshot offset', h.get('Stream-Snapshot-Offset') ? code(h.get('Stream-Snapshot-Offset')) : el('span', { class: 'muted' }, 'none')],
    h.get('Stream-Snapshot-Digest') ? ['Snapshot digest', code(h.get('Stream-Snapshot-Digest'))] : null,
    ['Fork parent', fork],
    !(lineage instanceof Error) && lineage.forks ? ['Forks', fmtCount(lineage.forks) + ' live fork' + (lineage.forks === 1 ? '' : 's') + ' of this stream'] : null,
    h.get('Stream-Extensions') ? ['Extensions', code(h.get('Stream-Extensions'))] : null,
  ]);
}

function attrsTable(attrs) {
  if (attrs instanceof Error) return el('p', { class: 'muted' }, attrs.message);
  const rows = flatten(attrs, '');
  if (!rows.length) return el('p', { class: 'muted' }, 'No attributes.');
  return kvTable(rows.map(([k, v]) => [k, el('code', {}, typeof v === 'string' ? v : JSON.stringify(v))]));
}

// flatten turns nested objects into [dotted.key, scalar or array] rows.
function flatten(v, prefix) {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return [[prefix, v]];
  const out = [];
  for (const k of Object.keys(v)) out.push(...flatten(v[k], prefix ? prefix + '.' + k : k));
  return out;
}

// recentMessages: the last TAIL_RECORDS records of a JSON stream with record coordinates
// (one row each); otherwise the last BYTES_SHOWN bytes of a catch-up read from the start.
async function recentMessages(url, head) {
  const ct = head.get('Content-Type') || '';
  try {
    if (isJSONType(ct) && /json-record-coordinates-v1/.test(head.get('Stream-Extensions') || '')) {
      const text = await (await request(url + '?tail_records=' + TAIL_RECORDS + '&record_view=envelope')).text();
      const recs = text.split('\n').filter(l => l).map(l => JSON.parse(l));
      if (!recs.length) return el('p', { class: 'muted' }, 'No records.');
      return el('div', { class: 'scroll' }, table([{ title: 'Record', num: true }, { title: 'Value' }],
        recs.map(r => el('tr', {}, el('td', { class: 'num meta' }, r.record), el('td', {}, pretty(r.value)))), 'msgs recent'));
    }
    return await recentBytes(url, ct);
  } catch (e) {
    return errorBox(e);
  }
}

async function recentBytes(url, ct) {
  const chunks = [];
  let offset = '-1', total = 0;
  for (let i = 0; i < 4; i++) { // at most 4 catch-up responses (about 4 MiB on dsd)
    const res = await request(url + '?offset=' + enc(offset));
    const b = new Uint8Array(await res.arrayBuffer());
    chunks.push(b);
    total += b.length;
    offset = res.headers.get('Stream-Next-Offset');
    if (res.headers.get('Stream-Up-To-Date') === 'true') break;
  }
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.length; }
  if (!total) return el('p', { class: 'muted' }, 'The stream is empty.');
  const shown = all.subarray(Math.max(0, total - BYTES_SHOWN));
  const note = shown.length < total ? 'the last ' + fmtBytes(shown.length) + ' of ' + fmtBytes(total) + ' read from the start'
    : 'all ' + fmtBytes(total) + ' from the start';
  let body;
  if (isJSONType(ct)) {
    let msgs = null;
    try { msgs = JSON.parse(new TextDecoder().decode(all)); } catch (e) { /* not one array */ }
    if (Array.isArray(msgs)) {
      body = table([{ title: '#', num: true }, { title: 'Message' }],
        msgs.slice(-TAIL_RECORDS).map((m, i) => el('tr', {}, el('td', { class: 'num meta' }, Math.max(0, msgs.length - TAIL_RECORDS) + i), el('td', {}, pretty(m)))), 'msgs recent');
    }
  }
  if (!body) body = isTextType(ct) ? el('pre', {}, new TextDecoder().decode(shown)) : hexDump(shown, total - shown.length);
  return el('div', {}, el('p', { class: 'muted' }, note), el('div', { class: 'scroll' }, body));
}

// ---- live tail ----

// liveTail follows url over SSE from offset (or, on a stream with record coordinates, from
// record ordinal record, so that control events number the messages: extension §6.9):
// fetch with the token (EventSource cannot send one), each message one row, resuming from
// the last control event's position whenever the response ends (dsd ends SSE responses
// after --sse-max-age) or fails, until the stream is closed or the view is left.
function liveTail(url, ct, offset, record, closed) {
  const status = el('span', { id: 'live-status' });
  const counter = el('span', { class: 'muted', id: 'live-info' });
  const rows = el('tbody', { id: 'live-rows' });
  const node = el('div', { class: 'card' },
    el('h2', {}, 'Live tail', status, counter),
    el('div', { class: 'scroll' }, el('table', { class: 'msgs live' },
      el('thead', {}, el('tr', {}, el('th', {}, 'Received (UTC)'), isJSONType(ct) ? el('th', { class: 'num' }, 'Record') : null,
        el('th', {}, 'Next offset'), el('th', {}, 'Data'))), rows)),
    el('p', { class: 'muted', id: 'live-empty' }, 'Waiting for new messages…'));
  const ctl = new AbortController();
  let connections = 0;
  const setStatus = (text, cls) => status.replaceChildren(badge(text, cls));
  const from = () => (record != null ? 'record=' + record : 'offset=' + enc(offset));
  const info = () => counter.replaceChildren(el('code', {}, 'from ' + from()), ' · ' + connections + ' connection' + (connections === 1 ? '' : 's'));

  // addRow shows one data event, a JSON batch as one row per message (numbered by the
  // control event's streamNextRecord when the stream has record coordinates).
  function addRow(data, control) {
    document.getElementById('live-empty')?.remove();
    const json = isJSONType(ct);
    const cells = json && Array.isArray(data) ? data.map(m => pretty(m)) : [content(data, ct)];
    const next = control.streamNextRecord;
    cells.forEach((c, i) => {
      const rec = json ? el('td', { class: 'num meta' }, typeof next === 'number' ? next - cells.length + i : '') : null;
      rows.prepend(el('tr', {}, el('td', { class: 'meta' }, new Date().toISOString().slice(11, 23)), rec,
        el('td', { class: 'meta' }, el('code', {}, control.streamNextOffset)), el('td', {}, c)));
    });
    while (rows.children.length > LIVE_ROWS) rows.lastChild.remove();
    figuresSoon();
  }

  async function connect() {
    connections++;
    info();
    const res = await request(url + '?live=sse&' + from(), { signal: ctl.signal });
    const base64 = (res.headers.get('Stream-SSE-Data-Encoding') || '').toLowerCase() === 'base64';
    setStatus('live', 'live');
    let pending = null;
    for await (const ev of sseEvents(res.body)) {
      if (ev.event === 'data') {
        pending = decodeData(ev.data, base64, ct);
      } else if (ev.event === 'control') {
        const c = JSON.parse(ev.data);
        if (pending !== null) addRow(pending, c);
        pending = null;
        offset = c.streamNextOffset;
        if (record != null && typeof c.streamNextRecord === 'number') record = c.streamNextRecord;
        info();
        if (c.streamClosed) return true;
      }
    }
    return false;
  }

  async function run() {
    let delay = 250;
    while (!ctl.signal.aborted) {
      try {
        if (await connect()) { setStatus('stream closed', 'closed'); return; }
        delay = 250; // the server ended the response: resume at once from offset
        setStatus('reconnecting', 'wait');
      } catch (e) {
        if (ctl.signal.aborted) return;
        setStatus('disconnected: ' + e.message, 'off');
        delay = Math.min(delay * 2, 5000);
      }
      await new Promise(r => setTimeout(r, delay));
    }
  }

  if (closed) setStatus('stream closed', 'closed');
  else { setStatus('connecting', 'wait'); run(); }
  return { node, stop: () => ctl.abort() };
}

// decodeData turns an SSE data payload into what addRow shows: parsed JSON for JSON
// streams, else bytes (base64-decoded when the response says so, B-5.8-02).
function decodeData(data, base64, ct) {
  if (base64) return Uint8Array.from(atob(data.replace(/[\r\n]/g, '')), c => c.charCodeAt(0));
  if (isJSONType(ct)) {
    try { return JSON.parse(data); } catch (e) { /* maybe one message a line */ }
    try { return data.split('\n').filter(l => l.trim()).map(l => JSON.parse(l)); } catch (e) { /* show as text */ }
  }
  return new TextEncoder().encode(data);
}

// sseEvents yields {event, data} from an event-stream body; data lines ("data:" then the
// payload, no space stripped: B-5.8-08) are joined with "\n".
async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end;
    while ((end = buf.search(/\r?\n\r?\n/)) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end).replace(/^\r?\n\r?\n/, '');
      let event = 'message';
      const data = [];
      for (const line of block.split(/\r?\n/)) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5));
      }
      yield { event, data: data.join('\n') };
    }
  }
}

// ---- router ----

let current = null;
let generation = 0;

async function route() {
  if (current && current.stop) current.stop();
  current = null;
  const gen = ++generation;
  const [path, qs] = (location.hash.replace(/^#/, '') || '/').split('?');
  const q = new URLSearchParams(qs || '');
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  let view = null;
  try {
    if (parts[0] === 'b' && parts.length === 2) view = await bucketView(parts[1], q);
    else if (parts[0] === 's' && parts.length === 3) view = await streamView(parts[1], parts[2]);
    else view = await bucketsView(q);
  } catch (e) {
    if (gen === generation) show(errorBox(e));
  }
  if (gen !== generation) { if (view && view.stop) view.stop(); return; } // left meanwhile
  current = view;
}

function init() {
  const input = document.getElementById('token');
  input.value = token();
  document.getElementById('token-form').addEventListener('submit', e => {
    e.preventDefault();
    if (input.value) sessionStorage.setItem(TOKEN_KEY, input.value);
    else sessionStorage.removeItem(TOKEN_KEY);
    refreshFigures();
    route();
  });
  window.addEventListener('hashchange', () => { refreshFigures(); route(); });
  refreshFigures();
  setInterval(refreshFigures, 5000);
  route();
}

init();
