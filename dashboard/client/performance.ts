// The Route performance section. Everything here is metered, so nothing loads with the page or
// its refreshes: the route list of a mode loads once, when the section is opened (or the mode
// changed), and Show asks the performance endpoint twice (the periods; the whole range, for the
// prediction accuracy and the totals). A default range reaching outside the retained window is
// moved inside it once; a range the developer picked is answered as the API says.
import { $, el, fill, sectionError } from './dom.ts';
import { drawAccuracy, drawHeadways, drawShares } from './performance-chart.ts';
import {
  checkPerformanceQuery,
  defaultRange,
  fitRange,
  performancePath,
  retainedWindowOf,
  routeChoice,
  type CheckedQuery,
  type DateRange,
  type PerformanceMode,
  type RouteChoice,
} from './performance-query.ts';
import { renderPerformance, type Shown } from './performance-view.ts';
import { call } from './session.ts';
import type { DirectoryEntry, Page, PerformanceRollup } from './types.ts';

const view = {
  routes: new Map<string, RouteChoice[]>(),
  routesToken: 0,
  token: 0,
  shown: null as Shown | null,
  /** the developer changed a date: their range is sent as it is */
  touched: false,
};

const input = (id: string) => $<HTMLInputElement>(id);
const mode = () => $<HTMLSelectElement>('performance-mode').value as PerformanceMode;

function setDates(range: DateRange): void {
  input('performance-from').value = range.from;
  input('performance-to').value = range.to;
}

function readForm(): CheckedQuery {
  return checkPerformanceQuery({
    mode: mode(),
    route: $<HTMLSelectElement>('performance-route').value,
    group: $<HTMLSelectElement>('performance-group').value,
    from: input('performance-from').value,
    to: input('performance-to').value,
    fromBad: input('performance-from').validity.badInput,
    toBad: input('performance-to').validity.badInput,
  });
}

function showFormError(message: string | null | undefined, field?: string): void {
  const line = $('performance-form-error');
  line.textContent = message || '';
  line.hidden = !message;
  for (const name of ['route', 'from', 'to']) {
    const control = $(`performance-${name}`);
    if (message && name === field) control.setAttribute('aria-invalid', 'true');
    else control.removeAttribute('aria-invalid');
  }
  if (message && field) $(`performance-${field}`).focus();
}

function setBusy(on: boolean): void {
  $<HTMLButtonElement>('performance-show').disabled = on;
  $('performance').setAttribute('aria-busy', on ? 'true' : 'false');
}

function fillRoutes(choices: RouteChoice[] | null, placeholder: string): void {
  const select = $<HTMLSelectElement>('performance-route');
  const before = select.value;
  fill(
    select,
    choices?.length
      ? choices.map((c) => el('option', { value: c.id, selected: c.id === before, text: c.label }))
      : el('option', { value: '', text: placeholder }),
  );
  select.disabled = !choices?.length;
}

/** The mode's route list, from the directory once per session (or again with force). */
async function loadRoutes(force: boolean): Promise<void> {
  const m = mode();
  const what = m === 'rail' ? 'lines' : 'routes';
  const cached = view.routes.get(m);
  $('performance-reload').hidden = true;
  if (cached && !force) return fillRoutes(cached, `No ${m} ${what} in the imported schedules`);
  const token = ++view.routesToken;
  fillRoutes(null, `Loading the ${m} ${what}…`);
  const r = await call<Page<DirectoryEntry>>(m);
  if (!r || token !== view.routesToken || m !== mode()) return;
  if (!r.ok) {
    sectionError('performance', r.message);
    fillRoutes(null, `The ${m} ${what} did not load`);
    $('performance-reload').hidden = false;
    return;
  }
  const choices = r.data.data.map(routeChoice).filter((c): c is RouteChoice => c !== null);
  view.routes.set(m, choices);
  fillRoutes(choices, `No ${m} ${what} in the imported schedules`);
}

function clearShown(): void {
  view.shown = null;
  $('performance-summary').replaceChildren();
  $('performance-body').replaceChildren();
}

async function show(): Promise<void> {
  const checked = readForm();
  showFormError(checked.error, checked.field);
  if (checked.error !== undefined) return;
  let q = checked.query;
  const token = ++view.token;
  setBusy(true);
  try {
    let grouped = await call<PerformanceRollup>(performancePath(q));
    if (!grouped || token !== view.token) return;
    const window = !grouped.ok && !view.touched && q.from && q.to ? retainedWindowOf(grouped.data) : null;
    let moved: DateRange | null = null;
    if (window) {
      moved = fitRange(q, window);
      q = { ...q, ...moved };
      setDates(moved);
      grouped = await call<PerformanceRollup>(performancePath(q));
      if (!grouped || token !== view.token) return;
    }
    if (!grouped.ok) {
      clearShown();
      return sectionError('performance', grouped.message);
    }
    // the whole range as the API resolved it: the same days as the periods
    const range = { from: grouped.data.meta.from, to: grouped.data.meta.to };
    const period = await call<PerformanceRollup>(performancePath({ ...q, ...range }, 'period'));
    if (!period || token !== view.token) return;
    if (!period.ok) {
      clearShown();
      return sectionError('performance', period.message);
    }
    sectionError('performance', null);
    const choice = (view.routes.get(q.mode) || []).find((c) => c.id === q.route);
    view.shown = { grouped: grouped.data, period: period.data, label: choice ? choice.label : q.route, moved: window };
    renderPerformance(view.shown);
  } finally {
    if (token === view.token) setBusy(false);
  }
}

/** After a resize: the charts again at the new width, from the figures already fetched. */
export function redrawPerformance(): void {
  const shown = view.shown;
  if (!shown || !document.getElementById('perf-shares-chart')) return;
  drawShares($('perf-shares-chart'), shown.grouped);
  drawHeadways($('perf-headways-chart'), shown.grouped);
  drawAccuracy($('perf-accuracy-chart'), shown.period);
}

/** Sign out: closed, the defaults, nothing of the previous key's figures or lists left. */
export function resetPerformance(): void {
  view.routes.clear();
  view.routesToken++;
  view.token++;
  view.touched = false;
  clearShown();
  $<HTMLDetailsElement>('performance-panel').open = false;
  $<HTMLFormElement>('performance-form').reset();
  setDates(defaultRange(new Date()));
  fillRoutes(null, 'Open the section to load the list');
  showFormError(null);
  setBusy(false);
  $('performance-reload').hidden = true;
}

export function wirePerformance(): void {
  resetPerformance();
  $('performance-panel').addEventListener('toggle', () => {
    if (!$<HTMLDetailsElement>('performance-panel').open) return;
    redrawPerformance(); // a resize while closed drew them without a width
    void loadRoutes(false);
  });
  $('performance-mode').addEventListener('change', () => void loadRoutes(false));
  $('performance-reload').addEventListener('click', () => void loadRoutes(true));
  for (const id of ['performance-from', 'performance-to'])
    $(id).addEventListener('input', () => {
      view.touched = true;
    });
  $('performance-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void show();
  });
}
