import t from 'tap';
import { componentName, IncidentLog } from './incidents.ts';

const DAY = 86_400_000;
const MIN = 60_000;
const TODAY = Date.UTC(2024, 4, 7); // 2024-05-07 00:00 UTC
const NOW = TODAY + 12 * 3_600_000;

t.test('changes are recorded only when the state moves; the first observation starts the record', async (t) => {
  const log = new IncidentLog(7);
  t.same(log.transition('api', 'operational', 'fine', NOW - 10 * MIN), {
    component: 'api',
    state: 'operational',
    previous: null,
    reason: 'fine',
    atMs: NOW - 10 * MIN,
  });
  t.equal(log.transition('api', 'operational', 'fine', NOW - 9 * MIN), null);
  t.match(log.transition('api', 'down', '60 % 5xx', NOW - 8 * MIN), { previous: 'operational', state: 'down' });
  t.equal(log.stateOf('api'), 'down');
  t.equal(log.stateOf('alerts'), null);
});

t.test('incidents: runs away from operational, newest first, flapping merged', async (t) => {
  const log = new IncidentLog(7);
  const feed = 'feed:bus';
  log.transition(feed, 'operational', 'ok', NOW - 3 * DAY);
  log.transition(feed, 'degraded', 'last poll failed: HTTP 500', NOW - 3 * DAY + MIN);
  log.transition(feed, 'down', '2 polls failed in a row', NOW - 3 * DAY + 2 * MIN);
  log.transition(feed, 'operational', 'ok', NOW - 3 * DAY + 12 * MIN);
  // flaps within 10 minutes of the end: the same incident
  log.transition(feed, 'degraded', 'last poll failed: decode', NOW - 3 * DAY + 15 * MIN);
  log.transition(feed, 'operational', 'ok', NOW - 3 * DAY + 16 * MIN);
  // an hour later: a new one, still open
  log.transition(feed, 'degraded', 'data is stale', NOW - 3 * DAY + 76 * MIN);
  log.transition('api', 'operational', 'ok', NOW - DAY);
  log.transition('api', 'degraded', 'p99 latency 2500 ms', NOW - 30 * MIN);
  log.transition('api', 'operational', 'ok', NOW - 20 * MIN);

  const { items, total } = log.incidents(NOW);
  t.equal(total, 3);
  t.same(
    items.map((i) => [i.component, i.state, i.reason, i.ended_at === null]),
    [
      ['api', 'degraded', 'p99 latency 2500 ms', false],
      [feed, 'degraded', 'data is stale', true],
      [feed, 'down', 'last poll failed: HTTP 500', false],
    ],
  );
  const merged = items[2]!;
  t.equal(merged.changes, 5, 'two runs merged: degraded, down, up, degraded, up');
  t.equal(merged.ended_at, new Date(NOW - 3 * DAY + 16 * MIN).toISOString());
  t.equal(merged.name, 'Feed bus');
});

t.test('a component already down when the window starts', async (t) => {
  const log = new IncidentLog(7);
  log.load(
    [{ component: 'alerts', state: 'operational', previous: 'down', reason: 'ok', atMs: NOW - DAY }],
    new Map([['alerts', 'down' as const]]),
  );
  t.equal(log.stateOf('alerts'), 'operational');
  const { items } = log.incidents(NOW);
  t.equal(items.length, 0, 'a recovery alone opens nothing');
  log.transition('alerts', 'down', 'every alert source is down: a', NOW - MIN);
  const days = log.days(['alerts'], NOW);
  t.same(
    days[0]!.days.map((d) => d.state),
    new Array(7).fill('down'),
    "down from before the window until yesterday's recovery (a day's worst state), then down again today",
  );
  t.equal(days[0]!.days[5]!.down_s, 12 * 3_600, 'yesterday: down until noon');
  t.equal(days[0]!.days[6]!.down_s, 60);
  t.equal(days[0]!.days[0]!.date, '2024-05-01');
  t.equal(days[0]!.name, 'Alert ingestion');
});

t.test('days without any record are null; prune keeps the state the dropped changes left', async (t) => {
  const log = new IncidentLog(7);
  log.transition('feed:x', 'operational', 'ok', NOW - 2 * DAY);
  log.transition('feed:x', 'degraded', 'stale', NOW - DAY - 3_600_000);
  let days = log.days(['feed:x', 'feed:never'], NOW);
  t.same(
    days[0]!.days.map((d) => d.state),
    [null, null, null, null, 'operational', 'degraded', 'degraded'],
  );
  t.equal(days[0]!.days[5]!.degraded_s, 13 * 3_600, 'from 11:00 to midnight');
  t.equal(days[0]!.days[6]!.degraded_s, 12 * 3_600);
  t.same(
    days[1]!.days.map((d) => d.state),
    new Array(7).fill(null),
  );

  log.prune(NOW + 6 * DAY);
  days = log.days(['feed:x'], NOW + 6 * DAY);
  t.same(
    days[0]!.days.map((d) => d.state),
    new Array(7).fill('degraded'),
    'the pruned change still sets the state',
  );
  t.same(log.incidents(NOW + 6 * DAY).items.length, 0, 'its incident started before the window');
  t.equal(componentName('something'), 'something');
});
