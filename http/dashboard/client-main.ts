// Browser code: the session (sign in, sign out, a 401 anywhere signs out) and loading. The key
// lives in sessionStorage and the Authorization header only. Account and usage are not metered and
// refresh every minute while the tab is visible; webhooks and exports are metered (Free keys have
// 20 requests per 5 minutes), so they load at sign-in, on Refresh, and every 5 minutes.
export const AUTO_REFRESH_S = 60;
export const FULL_REFRESH_EVERY = 5;

export const MAIN_SCRIPT = String.raw`
var session = { key: null, generation: 0, account: null, busy: false, timer: null, ticks: 0, usage: null };

/** A GET for the signed-in key; null when the session ended meanwhile or the key was refused. */
async function call(path) {
  var generation = session.generation;
  var url = /^(https?:)?\//.test(path) ? path : API + path;
  var result = await request(url, session.key);
  if (generation !== session.generation) return null;
  if (result.status === 401) {
    signOut('Signed out: the server refused this key (' + result.message + '). Sign in again with a valid key.', true);
    return null;
  }
  noteWindow(result.headers);
  return result;
}

/** Metered answers carry the window in the RateLimit header ("5m";r=<left>;t=<seconds>). */
function noteWindow(headers) {
  var account = session.account;
  var value = headers && headers.get('RateLimit');
  var match = value && /;r=(\d+);t=(\d+)/.exec(value);
  if (!account || !match) return;
  account.window = { limit: account.window.limit, remaining: Number(match[1]), reset_seconds: Number(match[2]) };
  renderWindow(account.window);
}

function notice(message, bad) {
  var box = $('notice');
  box.textContent = message || '';
  box.hidden = !message;
  box.className = 'notice' + (bad ? ' bad' : '');
}

function showSignedIn(on) {
  $('signin').hidden = on;
  $('app').hidden = !on;
  $('session').hidden = !on;
}

var DATA_CONTAINERS = ['who', 'plan-body', 'window-body', 'usage-range', 'usage-totals', 'usage-chart', 'usage-table',
  'streams-body', 'endpoints-body', 'deliveries-body', 'exports-body', 'updated'];

function signOut(message, bad) {
  session.generation++;
  session.key = null;
  session.account = null;
  session.usage = null;
  forgetKey();
  if (session.timer !== null) clearInterval(session.timer);
  session.timer = null;
  // nothing of the previous key stays in the page
  DATA_CONTAINERS.forEach(function (id) { $(id).replaceChildren(); });
  document.querySelectorAll('#app .error').forEach(function (line) { line.textContent = ''; line.hidden = true; });
  resetExports();
  showSignedIn(false);
  notice(message || 'Signed out. The key was removed from this tab.', bad);
  $('key').focus();
}

async function loadUsage() {
  var r = await call('account/usage?days=14');
  if (!r) return;
  if (!r.ok) return sectionError('usage', r.message);
  session.usage = r.data;
  renderUsage(r.data);
}

async function loadWebhooks() {
  var both = await Promise.all([call('webhooks/endpoints'), call('webhooks/deliveries?limit=20')]);
  if (!both[0] || !both[1]) return;
  var failed = both[0].ok ? both[1] : both[0];
  if (!failed.ok) return sectionError('webhooks', failed.message);
  renderWebhooks(both[0].data, both[1].data, session.account && session.account.limits);
}

async function loadAccount() {
  var r = await call('account');
  if (!r) return false;
  if (!r.ok) {
    sectionError('plan', r.message);
    return session.account !== null;
  }
  session.account = r.data;
  renderAccount(r.data);
  return true;
}

/** full: also the metered parts (webhooks, exports). */
async function refresh(full) {
  if (session.key === null || session.busy) return;
  var generation = session.generation;
  session.busy = true;
  $('refresh').disabled = true;
  try {
    if (!(await loadAccount())) return;
    await Promise.all(full ? [loadUsage(), loadWebhooks(), loadExports(null)] : [loadUsage()]);
    if (generation === session.generation) $('updated').textContent = 'Updated ' + new Date().toLocaleTimeString();
  } finally {
    session.busy = false;
    $('refresh').disabled = false;
  }
}

function startTimer() {
  if (session.timer !== null) clearInterval(session.timer);
  session.ticks = 0;
  session.timer = setInterval(function () {
    if (document.visibilityState !== 'visible') return;
    session.ticks++;
    refresh(session.ticks % ${FULL_REFRESH_EVERY} === 0);
  }, ${AUTO_REFRESH_S * 1000});
}

async function begin(key, account) {
  session.generation++;
  session.key = key;
  session.account = account;
  storeKey(key);
  showSignedIn(true);
  notice(null);
  renderAccount(account);
  startTimer();
  var generation = session.generation;
  session.busy = true;
  try {
    await Promise.all([loadUsage(), loadWebhooks(), loadExports(null)]);
    if (generation === session.generation) $('updated').textContent = 'Updated ' + new Date().toLocaleTimeString();
  } finally {
    session.busy = false;
  }
}

async function signIn(key) {
  var error = $('signin-error');
  error.hidden = true;
  $('signin-button').disabled = true;
  try {
    var r = await request(API + 'account', key);
    if (!r.ok) {
      error.textContent = (r.status === 401 ? 'This key was refused. ' : '') + r.message;
      error.hidden = false;
      return;
    }
    $('key').value = '';
    await begin(key, r.data);
  } finally {
    $('signin-button').disabled = false;
  }
}

$('signin-form').addEventListener('submit', function (event) {
  event.preventDefault();
  var key = $('key').value.trim();
  if (!key) return;
  notice(null);
  signIn(key);
});
$('signout').addEventListener('click', function () { signOut(null, false); });
$('refresh').addEventListener('click', function () { refresh(true); });
var resizeTimer = null;
window.addEventListener('resize', function () {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(function () { if (session.usage) drawUsageChart($('usage-chart'), session.usage); }, 150);
});
document.addEventListener('visibilitychange', function () {
  if (document.visibilityState === 'visible' && session.key !== null) refresh(false);
});

(function resume() {
  var key = storedKey();
  if (!key) return;
  // a reload keeps the session: the stored key is checked again like a fresh sign-in
  session.key = key;
  showSignedIn(true);
  request(API + 'account', key).then(function (r) {
    if (session.key !== key) return;
    if (r.status === 401) return signOut('Signed out: the server refused the stored key (' + r.message + ').', true);
    if (!r.ok) {
      showSignedIn(false);
      session.key = null;
      notice(r.message, true);
      return;
    }
    begin(key, r.data);
  });
})();
`;
