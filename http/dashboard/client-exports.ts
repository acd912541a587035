// Browser code: the History exports section (Max plan, live keys). The list endpoint is metered,
// so the filter form asks nothing until Apply; a range that ends before it starts is refused here,
// before any request. The applied filter is what Refresh and the timer reload; the shown filter
// (the one the rows on screen answer) is what "Load more files" continues.
export const EXPORTS_PAGE_SIZE = 50;

export const EXPORTS_SCRIPT = String.raw`
var EXPORT_FILTER_NAMES = ['dataset', 'format', 'state', 'from', 'to'];
var DEFAULT_EXPORT_FILTER = { dataset: '', format: '', state: 'ready', from: '', to: '' };
var exportsView = { applied: DEFAULT_EXPORT_FILTER, shown: DEFAULT_EXPORT_FILTER, token: 0 };

/**
 * The form's values → { filter } or { error, field }. A date input's value is '' both when empty
 * and when half typed, so badInput tells the two apart.
 */
function checkExportFilter(values) {
  var filter = {};
  EXPORT_FILTER_NAMES.forEach(function (name) { filter[name] = String(values[name] || ''); });
  if (!filter.state) filter.state = 'ready';
  if (values.fromBad) return { error: 'The "from" service day is incomplete: pick a date or clear the field.', field: 'from' };
  if (values.toBad) return { error: 'The "to" service day is incomplete: pick a date or clear the field.', field: 'to' };
  if (filter.from && filter.to && filter.from > filter.to) {
    return { error: 'The range ends before it starts: "from" (' + filter.from + ') is after "to" (' + filter.to + ').', field: 'from' };
  }
  return { filter: filter };
}

/** The first page for a filter: every chosen value as a query parameter, empty ones left out. */
function exportsPath(filter) {
  var params = new URLSearchParams({ limit: '${EXPORTS_PAGE_SIZE}' });
  EXPORT_FILTER_NAMES.forEach(function (name) { if (filter[name]) params.set(name, filter[name]); });
  return 'history/exports?' + params.toString();
}

function isDefaultFilter(filter) {
  return EXPORT_FILTER_NAMES.every(function (name) { return filter[name] === DEFAULT_EXPORT_FILTER[name]; });
}

/** "ready files · alerts · ndjson.gz · service days 2024-03-01 to 2024-03-10" */
function describeFilter(filter) {
  var parts = [filter.state + ' files'];
  if (filter.dataset) parts.push(filter.dataset);
  if (filter.format) parts.push(filter.format);
  if (filter.from && filter.to) parts.push('service days ' + filter.from + ' to ' + filter.to);
  else if (filter.from) parts.push('service days from ' + filter.from);
  else if (filter.to) parts.push('service days up to ' + filter.to);
  return parts.join(' · ');
}

function readExportFilter() {
  var from = $('exports-from');
  var to = $('exports-to');
  return checkExportFilter({
    dataset: $('exports-dataset').value, format: $('exports-format').value, state: $('exports-state').value,
    from: from.value, to: to.value, fromBad: from.validity.badInput, toBad: to.validity.badInput,
  });
}

function showFilterError(message, field) {
  var line = $('exports-filter-error');
  line.textContent = message || '';
  line.hidden = !message;
  ['from', 'to'].forEach(function (name) {
    var input = $('exports-' + name);
    if (message && name === field) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  });
  if (message && field) $('exports-' + field).focus();
}

function setExportsBusy(on) {
  ['exports-apply', 'exports-clear', 'exports-more'].forEach(function (id) { $(id).disabled = on; });
  $('exports').setAttribute('aria-busy', on ? 'true' : 'false');
}

/** Sign out: back to the defaults, nothing of the previous key's listing left. */
function resetExports() {
  exportsView = { applied: DEFAULT_EXPORT_FILTER, shown: DEFAULT_EXPORT_FILTER, token: exportsView.token + 1 };
  $('exports-filter').reset();
  $('exports-filter').hidden = true;
  showFilterError(null);
  setExportsBusy(false);
  $('exports-more').hidden = true;
  $('exports-summary').replaceChildren();
}

function exportsUnavailable(account, message) {
  $('exports-filter').hidden = true;
  $('exports-summary').replaceChildren();
  var why = account.key.test
    ? 'Test keys get no bulk history data, whatever their plan. Sign in with a live Max key to download export files.'
    : 'History exports (daily Parquet and NDJSON files of the retained history) are part of the Max plan; this key is on the '
      + account.plan + ' plan.';
  fill($('exports-body'), [el('p', { class: 'plan-note', 'data-reason': 'plan', text: why }),
    message ? el('p', { class: 'empty', text: 'The API answered: ' + message }) : null]);
}

/** next: a links.next URL to append from; null lists the applied filter from its first page. */
async function loadExports(next) {
  var account = session.account;
  if (!account) return;
  // the endpoint answers 403 for every key without the right: spare the request
  if (!account.limits.history_exports) {
    $('exports-more').hidden = true;
    return exportsUnavailable(account, null);
  }
  $('exports-filter').hidden = false;
  var token = ++exportsView.token;
  var filter = next ? exportsView.shown : exportsView.applied;
  setExportsBusy(true);
  try {
    // the server's next link carries the filters and a cursor bound to them
    var r = await call(next || exportsPath(filter));
    if (!r || token !== exportsView.token) return;
    if (r.status === 403) {
      $('exports-more').hidden = true;
      return exportsUnavailable(account, r.message);
    }
    // a failed request leaves the rows, their filter and their next link as they were
    if (!r.ok) return sectionError('exports', r.message);
    exportsView.shown = filter;
    renderExports(r.data, Boolean(next), filter);
  } finally {
    if (token === exportsView.token) setExportsBusy(false);
  }
}

var EXPORT_TONE = { ready: 'ok', pending: '', running: 'warn', failed: 'bad' };

function exportRow(file) {
  var href = file.state === 'ready' && file.download ? safeHref(file.download.url) : null;
  var download = href
    ? el('a', { class: 'button primary download', href: href, download: '', 'data-id': file.id,
      title: 'Signed link, valid until ' + fmtTime(file.download.expires_at), text: 'Download' })
    : '—';
  return el('tr', { 'data-export': file.id, 'data-state': file.state, 'data-dataset': file.dataset, 'data-format': file.format }, [
    cell([el('strong', { text: file.dataset }), ' · ' + file.part,
      el('span', { class: 'sub', text: file.service_date + ' · ' + file.format })]),
    cell([badge(file.state, EXPORT_TONE[file.state]), file.error ? el('span', { class: 'sub failure', text: file.error }) : null]),
    cell(fmtNumber(file.rows), 'num hide-narrow'),
    cell(el('span', { title: fmtNumber(file.bytes) + ' bytes', text: fmtBytes(file.bytes) }), 'num'),
    cell(file.sha256 ? el('code', { title: file.sha256, text: file.sha256.slice(0, 12) + '…' }) : '—', 'hide-narrow'),
    cell(timeEl(file.created_at), 'hide-narrow'),
    cell(download),
  ]);
}

function renderExports(page, appendRows, filter) {
  sectionError('exports', null);
  var body = $('exports-body');
  var tbody = appendRows ? body.querySelector('tbody') : null;
  if (tbody) {
    page.data.forEach(function (file) { tbody.appendChild(exportRow(file)); });
  } else {
    fill(body, table('exports', [
      { label: 'Dataset, service day, format' }, { label: 'State' }, { label: 'Rows', className: 'num hide-narrow' },
      { label: 'Size', className: 'num' }, { label: 'SHA-256', className: 'hide-narrow' }, { label: 'Written', className: 'hide-narrow' },
      { label: 'File' },
    ], page.data.map(exportRow), isDefaultFilter(filter)
      ? 'No export file yet. The daily job writes one file per dataset, service day and format.'
      : 'No export file matches these filters.'));
  }
  var next = page.links && page.links.next ? sameOrigin(page.links.next) : null;
  var shown = body.querySelectorAll('tr[data-export]').length;
  fill($('exports-summary'), [el('strong', { 'data-count': shown, text: fmtNumber(shown) }),
    ' shown · ' + describeFilter(filter) + (next ? ' · more available' : '')]);
  var more = $('exports-more');
  more.hidden = next === null;
  more.setAttribute('data-next', next || '');
}

$('exports-filter').addEventListener('submit', function (event) {
  event.preventDefault();
  var checked = readExportFilter();
  showFilterError(checked.error, checked.field);
  if (checked.error) return;
  exportsView.applied = checked.filter;
  loadExports(null);
});
$('exports-clear').addEventListener('click', function () {
  $('exports-filter').reset();
  showFilterError(null);
  exportsView.applied = DEFAULT_EXPORT_FILTER;
  loadExports(null);
});
$('exports-more').addEventListener('click', function () {
  var next = $('exports-more').getAttribute('data-next');
  if (next) loadExports(next);
});
`;
