// Browser code shared by the dashboard's parts: DOM building, formatting and the API client.
// Plain ES2017 with no build step, concatenated into one IIFE by page.ts. Data only ever becomes
// text nodes or attribute values (el/svg below); no HTML is parsed anywhere in the client.
// No backticks in here: this text lives inside a template literal.
export const CORE_SCRIPT = String.raw`
var API = 'api/v1/';
var STORAGE_KEY = 'transit-api.dashboard.key';
var SVG_NS = 'http://www.w3.org/2000/svg';

function $(id) { return document.getElementById(id); }

function setAttrs(node, attrs) {
  if (!attrs) return;
  Object.keys(attrs).forEach(function (name) {
    var value = attrs[name];
    if (value === null || value === undefined || value === false) return;
    if (name === 'text') node.textContent = String(value);
    else if (name.slice(0, 2) === 'on' && typeof value === 'function') node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  });
}

function append(node, children) {
  if (children === null || children === undefined) return;
  (Array.isArray(children) ? children : [children]).forEach(function (child) {
    if (child === null || child === undefined || child === false) return;
    node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  });
}

/** An element; strings among the children become text nodes. */
function el(tag, attrs, children) {
  var node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

function svg(tag, attrs, children) {
  var node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

function fill(node, children) {
  node.replaceChildren();
  append(node, children);
}

function fmtNumber(n) {
  return typeof n === 'number' && isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: 1 }) : '—';
}

function fmtBytes(n) {
  if (typeof n !== 'number' || !isFinite(n) || n < 0) return '—';
  var units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  var i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return (i === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + ' ' + units[i];
}

function fmtSeconds(value) {
  var s = Math.max(0, Math.round(Number(value) || 0));
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.floor(s / 60) + ' min' + (s % 60 && s < 600 ? ' ' + (s % 60) + ' s' : '');
  if (s < 86400) return Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min';
  return Math.floor(s / 86400) + ' d ' + Math.floor((s % 86400) / 3600) + ' h';
}

/** ISO instant → "YYYY-MM-DD HH:MM UTC"; the server's clock and zone, not the browser's. */
function fmtTime(iso) {
  if (!iso) return '—';
  var d = new Date(iso);
  if (isNaN(d.getTime())) return String(iso);
  return d.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

function timeEl(iso) {
  return iso ? el('time', { datetime: iso, title: iso, text: fmtTime(iso) }) : '—';
}

/** An href for a link the server sent: http(s) only, so no data or script URL ever becomes a link. */
function safeHref(url) {
  if (typeof url !== 'string' || url === '') return null;
  try {
    var parsed = new URL(url, location.href);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch (err) {
    return null;
  }
}

function sameOrigin(url) {
  var href = safeHref(url);
  return href !== null && new URL(href).origin === location.origin ? href : null;
}

/** problem+json → "Title: detail"; anything else → its HTTP status. */
function problemText(body, status) {
  if (body && typeof body === 'object' && (typeof body.title === 'string' || typeof body.detail === 'string')) {
    return [body.title, body.detail].filter(function (s) { return typeof s === 'string' && s !== ''; }).join(': ');
  }
  return 'HTTP ' + status;
}

/** One GET with the key in the Authorization header; never throws. */
async function request(path, key) {
  var res;
  try {
    res = await fetch(path, {
      headers: { Authorization: 'Bearer ' + key, Accept: 'application/json' },
      cache: 'no-store', credentials: 'omit', redirect: 'error',
    });
  } catch (err) {
    return { ok: false, status: 0, data: null, headers: null, message: 'The server cannot be reached (' + (err && err.message || err) + ').' };
  }
  var body = null;
  try { body = await res.json(); } catch (err) { body = null; }
  var result = { ok: res.ok, status: res.status, data: body, headers: res.headers, message: null };
  if (!res.ok) {
    result.message = problemText(body, res.status);
    var retry = res.headers.get('Retry-After');
    if (res.status === 429 && retry) result.message += ' Retry in ' + fmtSeconds(retry) + '.';
  } else if (body === null) {
    result.ok = false;
    result.message = 'The server sent an answer that is not JSON (HTTP ' + res.status + ').';
  }
  return result;
}

function storedKey() {
  try { return sessionStorage.getItem(STORAGE_KEY); } catch (err) { return null; }
}

function storeKey(key) {
  // without sessionStorage (some private modes) the key lives in this page only
  try { sessionStorage.setItem(STORAGE_KEY, key); } catch (err) { /* kept in memory */ }
}

function forgetKey() {
  try { sessionStorage.removeItem(STORAGE_KEY); } catch (err) { /* nothing stored */ }
}

/** A section's error line (problem title and detail), or none; its own child, not a form's message. */
function sectionError(id, message) {
  var line = document.querySelector('#' + id + ' > .error');
  if (!line) return;
  line.textContent = message || '';
  line.hidden = !message;
}
`;
