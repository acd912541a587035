// The History exports section (Max plan, live keys). The list endpoint is metered, so the filter
// form asks nothing until Apply; a range that ends before it starts is refused here, before any
// request. The applied filter is what Refresh and the timer reload; the shown filter (the one the
// rows on screen answer) is what "Load more files" continues.
import { $, el, fill, sectionError, timeEl } from './dom.ts';
import {
  checkExportFilter,
  DEFAULT_EXPORT_FILTER,
  describeFilter,
  exportsPath,
  isDefaultFilter,
  type CheckedFilter,
  type ExportFilter,
} from './export-filter.ts';
import { fmtBytes, fmtNumber, fmtTime, safeHref, sameOrigin } from './format.ts';
import { badge, cell, table } from './sections.ts';
import { call, session } from './session.ts';
import type { Account, ExportFile, Page } from './types.ts';

let exportsView = {
  applied: DEFAULT_EXPORT_FILTER as ExportFilter,
  shown: DEFAULT_EXPORT_FILTER as ExportFilter,
  token: 0,
};

function readExportFilter(): CheckedFilter {
  const from = $<HTMLInputElement>('exports-from');
  const to = $<HTMLInputElement>('exports-to');
  return checkExportFilter({
    dataset: $<HTMLSelectElement>('exports-dataset').value,
    format: $<HTMLSelectElement>('exports-format').value,
    state: $<HTMLSelectElement>('exports-state').value,
    from: from.value,
    to: to.value,
    fromBad: from.validity.badInput,
    toBad: to.validity.badInput,
  });
}

function showFilterError(message: string | null | undefined, field?: 'from' | 'to'): void {
  const line = $('exports-filter-error');
  line.textContent = message || '';
  line.hidden = !message;
  for (const name of ['from', 'to'] as const) {
    const input = $(`exports-${name}`);
    if (message && name === field) input.setAttribute('aria-invalid', 'true');
    else input.removeAttribute('aria-invalid');
  }
  if (message && field) $(`exports-${field}`).focus();
}

function setExportsBusy(on: boolean): void {
  for (const id of ['exports-apply', 'exports-clear', 'exports-more']) $<HTMLButtonElement>(id).disabled = on;
  $('exports').setAttribute('aria-busy', on ? 'true' : 'false');
}

/** Sign out: back to the defaults, nothing of the previous key's listing left. */
export function resetExports(): void {
  exportsView = { applied: DEFAULT_EXPORT_FILTER, shown: DEFAULT_EXPORT_FILTER, token: exportsView.token + 1 };
  $<HTMLFormElement>('exports-filter').reset();
  $('exports-filter').hidden = true;
  showFilterError(null);
  setExportsBusy(false);
  $('exports-more').hidden = true;
  $('exports-summary').replaceChildren();
}

function exportsUnavailable(account: Account, message: string | null): void {
  $('exports-filter').hidden = true;
  $('exports-summary').replaceChildren();
  const why = account.key.test
    ? 'Test keys get no bulk history data, whatever their plan. Sign in with a live Max key to download export files.'
    : 'History exports (daily Parquet and NDJSON files of the retained history) are part of the Max plan; ' +
      'this key is on the ' +
      `${account.plan} plan.`;
  fill($('exports-body'), [
    el('p', { class: 'plan-note', 'data-reason': 'plan', text: why }),
    message ? el('p', { class: 'empty', text: `The API answered: ${message}` }) : null,
  ]);
}

/** next: a links.next URL to append from; null lists the applied filter from its first page. */
export async function loadExports(next: string | null): Promise<void> {
  const account = session.account;
  if (!account) return;
  // the endpoint answers 403 for every key without the right: spare the request
  if (!account.limits.history_exports) {
    $('exports-more').hidden = true;
    return exportsUnavailable(account, null);
  }
  $('exports-filter').hidden = false;
  const token = ++exportsView.token;
  const filter = next ? exportsView.shown : exportsView.applied;
  setExportsBusy(true);
  try {
    // the server's next link carries the filters and a cursor bound to them
    const r = await call<Page<ExportFile>>(next || exportsPath(filter));
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

const EXPORT_TONE: Record<string, string> = { ready: 'ok', pending: '', running: 'warn', failed: 'bad' };

function exportRow(file: ExportFile): HTMLElement {
  const href = file.state === 'ready' && file.download ? safeHref(file.download.url, location.href) : null;
  const download =
    href && file.download
      ? el('a', {
          class: 'button primary download',
          href,
          download: '',
          'data-id': file.id,
          title: `Signed link, valid until ${fmtTime(file.download.expires_at)}`,
          text: 'Download',
        })
      : '—';
  return el(
    'tr',
    { 'data-export': file.id, 'data-state': file.state, 'data-dataset': file.dataset, 'data-format': file.format },
    [
      cell([
        el('strong', { text: file.dataset }),
        ` · ${file.part}`,
        el('span', { class: 'sub', text: `${file.service_date} · ${file.format}` }),
      ]),
      cell([
        badge(file.state, EXPORT_TONE[file.state]),
        file.error ? el('span', { class: 'sub failure', text: file.error }) : null,
      ]),
      cell(fmtNumber(file.rows), 'num hide-narrow'),
      cell(el('span', { title: `${fmtNumber(file.bytes)} bytes`, text: fmtBytes(file.bytes) }), 'num'),
      cell(file.sha256 ? el('code', { title: file.sha256, text: `${file.sha256.slice(0, 12)}…` }) : '—', 'hide-narrow'),
      cell(timeEl(file.created_at), 'hide-narrow'),
      cell(download),
    ],
  );
}

function renderExports(page: Page<ExportFile>, appendRows: boolean, filter: ExportFilter): void {
  sectionError('exports', null);
  const body = $('exports-body');
  const tbody = appendRows ? body.querySelector('tbody') : null;
  if (tbody) {
    for (const file of page.data) tbody.appendChild(exportRow(file));
  } else {
    fill(
      body,
      table(
        'exports',
        [
          { label: 'Dataset, service day, format' },
          { label: 'State' },
          { label: 'Rows', className: 'num hide-narrow' },
          { label: 'Size', className: 'num' },
          { label: 'SHA-256', className: 'hide-narrow' },
          { label: 'Written', className: 'hide-narrow' },
          { label: 'File' },
        ],
        page.data.map(exportRow),
        isDefaultFilter(filter)
          ? 'No export file yet. The daily job writes one file per dataset, service day and format.'
          : 'No export file matches these filters.',
      ),
    );
  }
  const next = page.links?.next ? sameOrigin(page.links.next, location.href) : null;
  const shown = body.querySelectorAll('tr[data-export]').length;
  fill($('exports-summary'), [
    el('strong', { 'data-count': shown, text: fmtNumber(shown) }),
    ` shown · ${describeFilter(filter)}${next ? ' · more available' : ''}`,
  ]);
  const more = $('exports-more');
  more.hidden = next === null;
  more.setAttribute('data-next', next || '');
}

/** The filter form's and the "more" button's handlers. */
export function wireExports(): void {
  $('exports-filter').addEventListener('submit', (event) => {
    event.preventDefault();
    const checked = readExportFilter();
    showFilterError(checked.error, checked.field);
    if (checked.error !== undefined) return;
    exportsView.applied = checked.filter;
    void loadExports(null);
  });
  $('exports-clear').addEventListener('click', () => {
    $<HTMLFormElement>('exports-filter').reset();
    showFilterError(null);
    exportsView.applied = DEFAULT_EXPORT_FILTER;
    void loadExports(null);
  });
  $('exports-more').addEventListener('click', () => {
    const next = $('exports-more').getAttribute('data-next');
    if (next) void loadExports(next);
  });
}
