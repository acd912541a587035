// The dashboard's entry: the session (sign in, sign out, a 401 anywhere signs out) and loading.
// The key lives in sessionStorage and the Authorization header only. Account and usage are not
// metered and refresh every minute while the tab is visible; webhooks and exports are metered
// (Free keys have 20 requests per 5 minutes), so they load at sign-in, on Refresh, and every 5 minutes;
// route performance, metered too, loads only when asked for (performance.ts).
import { API, forgetKey, request, storedKey, storeKey } from './api.ts';
import { drawUsageChart } from './chart.ts';
import { $, sectionError } from './dom.ts';
import { loadExports, resetExports, wireExports } from './exports.ts';
import { redrawPerformance, resetPerformance, wirePerformance } from './performance.ts';
import { renderAccount, renderUsage, renderWebhooks } from './sections.ts';
import { call, session } from './session.ts';
import type { Account, Delivery, Endpoint, Page, Usage } from './types.ts';

const AUTO_REFRESH_S = 60;
const FULL_REFRESH_EVERY = 5;

function notice(message: string | null, bad?: boolean): void {
  const box = $('notice');
  box.textContent = message || '';
  box.hidden = !message;
  box.className = `notice${bad ? ' bad' : ''}`;
}

function showSignedIn(on: boolean): void {
  $('signin').hidden = on;
  $('app').hidden = !on;
  $('session').hidden = !on;
}

const DATA_CONTAINERS = [
  'who',
  'plan-body',
  'window-body',
  'usage-range',
  'usage-totals',
  'usage-chart',
  'usage-table',
  'streams-body',
  'endpoints-body',
  'deliveries-body',
  'exports-body',
  'updated',
];

function signOut(message: string | null, bad: boolean): void {
  session.generation++;
  session.key = null;
  session.account = null;
  session.usage = null;
  forgetKey();
  if (session.timer !== null) clearInterval(session.timer);
  session.timer = null;
  // nothing of the previous key stays in the page
  for (const id of DATA_CONTAINERS) $(id).replaceChildren();
  document.querySelectorAll<HTMLElement>('#app .error').forEach((line) => {
    line.textContent = '';
    line.hidden = true;
  });
  resetExports();
  resetPerformance();
  showSignedIn(false);
  notice(message || 'Signed out. The key was removed from this tab.', bad);
  $('key').focus();
}

session.onRefused = (message) =>
  signOut(`Signed out: the server refused this key (${message}). Sign in again with a valid key.`, true);

async function loadUsage(): Promise<void> {
  const r = await call<Usage>('account/usage?days=14');
  if (!r) return;
  if (!r.ok) return sectionError('usage', r.message);
  session.usage = r.data;
  renderUsage(r.data);
}

async function loadWebhooks(): Promise<void> {
  const [endpoints, deliveries] = await Promise.all([
    call<Page<Endpoint>>('webhooks/endpoints'),
    call<Page<Delivery>>('webhooks/deliveries?limit=20'),
  ]);
  if (!endpoints || !deliveries) return;
  if (!endpoints.ok) return sectionError('webhooks', endpoints.message);
  if (!deliveries.ok) return sectionError('webhooks', deliveries.message);
  renderWebhooks(endpoints.data, deliveries.data, session.account?.limits ?? null);
}

async function loadAccount(): Promise<boolean> {
  const r = await call<Account>('account');
  if (!r) return false;
  if (!r.ok) {
    sectionError('plan', r.message);
    return session.account !== null;
  }
  session.account = r.data;
  renderAccount(r.data);
  return true;
}

function updated(): void {
  $('updated').textContent = `Updated ${new Date().toLocaleTimeString()}`;
}

/** full: also the metered parts (webhooks, exports). */
async function refresh(full: boolean): Promise<void> {
  if (session.key === null || session.busy) return;
  const generation = session.generation;
  session.busy = true;
  $<HTMLButtonElement>('refresh').disabled = true;
  try {
    if (!(await loadAccount())) return;
    await Promise.all(full ? [loadUsage(), loadWebhooks(), loadExports(null)] : [loadUsage()]);
    if (generation === session.generation) updated();
  } finally {
    session.busy = false;
    $<HTMLButtonElement>('refresh').disabled = false;
  }
}

function startTimer(): void {
  if (session.timer !== null) clearInterval(session.timer);
  session.ticks = 0;
  session.timer = setInterval(() => {
    if (document.visibilityState !== 'visible') return;
    session.ticks++;
    void refresh(session.ticks % FULL_REFRESH_EVERY === 0);
  }, AUTO_REFRESH_S * 1000);
}

async function begin(key: string, account: Account): Promise<void> {
  session.generation++;
  session.key = key;
  session.account = account;
  storeKey(key);
  showSignedIn(true);
  notice(null);
  renderAccount(account);
  startTimer();
  const generation = session.generation;
  session.busy = true;
  try {
    await Promise.all([loadUsage(), loadWebhooks(), loadExports(null)]);
    if (generation === session.generation) updated();
  } finally {
    session.busy = false;
  }
}

async function signIn(key: string): Promise<void> {
  const error = $('signin-error');
  error.hidden = true;
  $<HTMLButtonElement>('signin-button').disabled = true;
  try {
    const r = await request<Account>(`${API}account`, key);
    if (!r.ok) {
      error.textContent = (r.status === 401 ? 'This key was refused. ' : '') + (r.message ?? '');
      error.hidden = false;
      return;
    }
    $<HTMLInputElement>('key').value = '';
    await begin(key, r.data);
  } finally {
    $<HTMLButtonElement>('signin-button').disabled = false;
  }
}

$('signin-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const key = $<HTMLInputElement>('key').value.trim();
  if (!key) return;
  notice(null);
  void signIn(key);
});
$('signout').addEventListener('click', () => signOut(null, false));
$('refresh').addEventListener('click', () => void refresh(true));
wireExports();
wirePerformance();
let resizeTimer: ReturnType<typeof setTimeout> | undefined;
window.addEventListener('resize', () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    if (session.usage) drawUsageChart($('usage-chart'), session.usage);
    redrawPerformance();
  }, 150);
});
document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible' && session.key !== null) void refresh(false);
});

// a reload keeps the session: the stored key is checked again like a fresh sign-in
const stored = storedKey();
if (stored) {
  session.key = stored;
  showSignedIn(true);
  void request<Account>(`${API}account`, stored).then((r) => {
    if (session.key !== stored) return;
    if (r.status === 401) return signOut(`Signed out: the server refused the stored key (${r.message}).`, true);
    if (!r.ok) {
      showSignedIn(false);
      session.key = null;
      notice(r.message, true);
      return;
    }
    void begin(stored, r.data);
  });
}
