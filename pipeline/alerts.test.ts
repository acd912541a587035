import t from 'tap';
import { AlertBook, statusAt } from './alert-lifecycle.ts';
import { normalizeAlertsJson } from './alerts-json.ts';
import { decodeFeedMessage } from './decode.ts';
import { RejectTally } from './normalize-context.ts';
import { normalizeFeedMessage } from './normalize-feed.ts';
import { encodeFeed, fakeSchedule, header, testConfig } from '../test/support/pipeline-fakes.ts';

const cfg = testConfig();
const NOW_S = 1_700_000_000;
const schedule = fakeSchedule({
  routes: [
    { route_id: 'Red', route_type: 1 },
    { route_id: '66', route_type: 3 },
  ],
  stops: [{ stop_id: 'p1', parent: 'place-pktrm' }],
  trips: [{ trip_id: 't66', route_id: '66' }],
});
const input = (feedId = 'mbta') => ({
  feed_id: feedId,
  observed_ms: NOW_S * 1000,
  schedule,
  timezone: 'UTC',
  freshness: cfg.freshness,
  delay: cfg.delay,
  rejects: new RejectTally(),
});

t.test('GTFS-RT alerts: effect, cause, languages, periods, scope and modes', async (t) => {
  const decoded = decodeFeedMessage(
    encodeFeed({
      header: header(NOW_S),
      entity: [
        {
          id: 'a1',
          alert: {
            active_period: [{ start: NOW_S + 100, end: NOW_S + 200 }, { start: NOW_S - 100 }],
            informed_entity: [{ route_id: 'Red' }, { stop_id: 'p1' }, { trip: { trip_id: 't66' } }, { route_type: 0 }],
            cause: 10,
            effect: 4,
            severity_level: 3,
            header_text: {
              translation: [
                { text: 'Detour', language: 'en' },
                { text: 'Desvío', language: 'es' },
                { text: 'untagged' },
              ],
            },
            description_text: { translation: [{ text: 'Long text' }] },
          },
        },
      ],
    }),
  );
  if (!decoded.ok) throw new Error(decoded.error);
  const [alert] = normalizeFeedMessage(decoded.message, input()).alerts;
  t.match(alert, {
    id: 'mbta:a1',
    feed_id: 'mbta',
    entity_id: 'a1',
    impact: 'detour',
    cause: 'construction',
    severity: 'warning',
    header: { en: 'Detour', es: 'Desvío', und: 'untagged' },
    description: { und: 'Long text' },
    url: {},
    routes: ['66', 'Red'],
    stations: ['place-pktrm'],
    trips: ['t66'],
    modes: ['rail', 'bus', 'streetcar'],
  });
  t.same(
    alert!.active_periods,
    [
      { start_ms: (NOW_S - 100) * 1000, end_ms: null },
      { start_ms: (NOW_S + 100) * 1000, end_ms: (NOW_S + 200) * 1000 },
    ],
    'sorted by start',
  );
});

t.test('feeds[].mode gives a mode to informed routes the schedule does not know', async (t) => {
  const decoded = decodeFeedMessage(
    encodeFeed({
      header: header(NOW_S),
      entity: [
        {
          id: 'a1',
          alert: {
            informed_entity: [{ route_id: '66' }, { route_id: 'Green-B' }],
            header_text: { translation: [{ text: 'x' }] },
          },
        },
      ],
    }),
  );
  if (!decoded.ok) throw new Error(decoded.error);
  const [alert] = normalizeFeedMessage(decoded.message, { ...input(), default_mode: 'streetcar' }).alerts;
  t.same(alert!.modes, ['bus', 'streetcar'], "66 is a bus in the schedule; Green-B takes the feed's mode");
  const [without] = normalizeFeedMessage(decoded.message, input()).alerts;
  t.same(without!.modes, ['bus'], 'without feeds[].mode, as before');
});

// issue 15: an alert naming only a station must reach the mode filters (/rail/alerts?station=…)
t.test('a selector naming only a stop takes the modes of the routes calling there', async (t) => {
  const railOnly = fakeSchedule({
    routes: [
      { route_id: 'Red', route_type: 1 },
      { route_id: '66', route_type: 3 },
    ],
    stops: [
      { stop_id: 'p1', parent: 'place-pktrm' },
      { stop_id: 'b1' },
      { stop_id: 'x1', parent: 'place-both' },
      { stop_id: 'x2', parent: 'place-both' },
    ],
    trips: [
      { trip_id: 'r1', route_id: 'Red' },
      { trip_id: 't66', route_id: '66' },
    ],
    stopTimes: {
      r1: [
        ['p1', '08:00:00'],
        ['x1', '08:05:00'],
      ],
      t66: [
        ['b1', '08:00:00'],
        ['x2', '08:10:00'],
      ],
    },
  });
  const alertOf = (informed: Record<string, unknown>[], over: Record<string, unknown> = {}) => {
    const decoded = decodeFeedMessage(
      encodeFeed({
        header: header(NOW_S),
        entity: [{ id: 'a1', alert: { informed_entity: informed, header_text: { translation: [{ text: 'x' }] } } }],
      }),
    );
    if (!decoded.ok) throw new Error(decoded.error);
    return normalizeFeedMessage(decoded.message, { ...input(), schedule: railOnly, ...over }).alerts[0]!;
  };
  t.same(alertOf([{ stop_id: 'p1' }]).modes, ['rail'], 'a platform of a rail-only station: rail');
  t.same(alertOf([{ stop_id: 'p1' }]).stations, ['place-pktrm']);
  t.same(alertOf([{ stop_id: 'x1' }]).modes, ['rail', 'bus'], 'a station both serve: both (all service at the stop)');
  t.same(alertOf([{ stop_id: 'x1', route_id: '66' }]).modes, ['bus'], "route AND stop: that route's mode only");
  t.same(alertOf([{ stop_id: 'x1', route_type: 0 }]).modes, ['streetcar'], 'route_type AND stop: that type only');
  t.same(alertOf([{ trip: { trip_id: 'r1' } }]).modes, ['rail'], "a trip: its route's mode");
  t.same(alertOf([{ stop_id: 'nowhere' }]).modes, [], 'a stop the schedule does not place: no mode');
  t.same(
    alertOf([{ stop_id: 'nowhere' }, { trip: { trip_id: 'ghost' } }], { default_mode: 'bus' }).modes,
    ['bus'],
    'a stop or trip the schedule cannot place takes feeds[].mode',
  );
});

t.test('statusAt: no periods is active; future only is upcoming; all ended is resolved', async (t) => {
  t.equal(statusAt([], 5), 'active');
  t.equal(statusAt([{ start_ms: 10, end_ms: 20 }], 5), 'upcoming');
  t.equal(statusAt([{ start_ms: 10, end_ms: 20 }], 15), 'active');
  t.equal(statusAt([{ start_ms: 10, end_ms: 20 }], 20), 'resolved');
  t.equal(
    statusAt(
      [
        { start_ms: null, end_ms: 20 },
        { start_ms: 30, end_ms: null },
      ],
      25,
    ),
    'upcoming',
  );
});

t.test('lifecycle: created, unchanged, updated on content, resolved when it leaves the feed', async (t) => {
  const book = new AlertBook();
  const content = (description: string, periods = [] as { start_ms: number | null; end_ms: number | null }[]) => ({
    id: 'f:1',
    feed_id: 'f',
    entity_id: '1',
    modes: ['bus' as const],
    impact: 'detour',
    cause: 'unknown_cause',
    severity: null,
    header: { en: 'Detour' },
    description: { en: description },
    url: {},
    active_periods: periods,
    routes: ['66'],
    stations: [],
    trips: [],
  });
  t.same(
    book.applyFeed('f', [content('a')], 1000).map((c) => [c.kind, c.alert.version, c.alert.status]),
    [['created', 1, 'active']],
  );
  t.same(book.applyFeed('f', [content('a')], 2000), [], 'same content: no version');
  t.same(
    book.applyFeed('f', [content('b')], 3000).map((c) => [c.kind, c.alert.version, c.alert.updated_ms]),
    [['updated', 2, 3000]],
  );
  t.same(book.applyFeed('other', [], 3500), [], 'another feed does not resolve it');
  const resolved = book.applyFeed('f', [], 4000);
  t.same(
    resolved.map((c) => [c.kind, c.alert.version, c.alert.status, c.alert.resolved_ms]),
    [['resolved', 3, 'resolved', 4000]],
  );
  t.same(book.tick(5000), [], 'a resolved alert that left the feed stays resolved');
  t.equal(book.prune(4500), 1, 'forgotten after the keep window');
  t.equal(book.list().length, 0);
});

t.test('lifecycle: time moves an alert from upcoming to active to resolved', async (t) => {
  const book = new AlertBook();
  const c = {
    id: 'f:2',
    feed_id: 'f',
    entity_id: '2',
    modes: [],
    impact: 'no_service',
    cause: 'strike',
    severity: null,
    header: {},
    description: {},
    url: {},
    active_periods: [{ start_ms: 100, end_ms: 200 }],
    routes: [],
    stations: [],
    trips: [],
  };
  t.equal(book.applyFeed('f', [c], 50)[0]!.alert.status, 'upcoming');
  t.same(
    book.tick(150).map((x) => [x.kind, x.alert.status, x.alert.version]),
    [['updated', 'active', 2]],
  );
  t.same(
    book.tick(250).map((x) => [x.kind, x.alert.status, x.alert.version]),
    [['resolved', 'resolved', 3]],
  );
  t.same(book.applyFeed('f', [c], 260), [], 'still published and still past its period');
});

t.test('lifecycle: restored alerts keep their versions', async (t) => {
  const book = new AlertBook();
  const first = new AlertBook().applyFeed(
    'f',
    [
      {
        id: 'f:3',
        feed_id: 'f',
        entity_id: '3',
        modes: [],
        impact: 'detour',
        cause: 'x',
        severity: null,
        header: { en: 'h' },
        description: {},
        url: {},
        active_periods: [],
        routes: [],
        stations: [],
        trips: [],
      },
    ],
    10,
  )[0]!.alert;
  book.restore([{ ...first, version: 7 }]);
  const { status, version, first_seen_ms, updated_ms, resolved_ms, ...content } = first;
  t.same(book.applyFeed('f', [content], 20), [], 'same content after restart: no new version');
  t.same(
    book.applyFeed('f', [], 30).map((c) => c.alert.version),
    [8],
  );
  t.ok(status && version && first_seen_ms && updated_ms !== undefined && resolved_ms === null);
});

t.test('alerts-json: a documented format, validated alert by alert', async (t) => {
  const body = Buffer.from(
    JSON.stringify({
      timestamp: '2023-11-14T22:13:20Z',
      alerts: [
        {
          id: 'elev-1',
          effect: 'ACCESSIBILITY_ISSUE',
          cause: 'maintenance',
          severity: 'INFO',
          header: { en: 'Elevator out', fr: 'Ascenseur en panne' },
          description: 'Use the ramp',
          active_periods: [{ start: NOW_S - 60, end: '2023-11-15T00:00:00+01:00' }],
          informed_entities: [{ stop_id: 'p1' }, { route_id: 'Red' }],
        },
        { id: 'bad-effect', effect: 'EXPLODED', header: 'x', informed_entities: [{ route_id: 'Red' }] },
        { id: 'no-scope', header: 'x', informed_entities: [] },
        { id: 'elev-1', header: 'dup', informed_entities: [{ route_type: 3 }] },
        'not an object',
      ],
    }),
  );
  const result = normalizeAlertsJson(body, input('city'));
  t.ok(result.ok);
  if (!result.ok) return;
  t.equal(result.poll.header_timestamp_ms, NOW_S * 1000);
  t.equal(result.poll.alert_entities, 5);
  t.same(result.poll.rejected, { invalid_alerts_json: 3, duplicate_entity: 1 });
  t.match(result.poll.alerts[0], {
    id: 'city:elev-1',
    impact: 'accessibility_issue',
    cause: 'maintenance',
    severity: 'info',
    header: { en: 'Elevator out', fr: 'Ascenseur en panne' },
    description: { und: 'Use the ramp' },
    stations: ['place-pktrm'],
    routes: ['Red'],
    modes: ['rail'],
    active_periods: [{ start_ms: (NOW_S - 60) * 1000, end_ms: Date.parse('2023-11-14T23:00:00Z') }],
  });
});

t.test('alerts-json: a body that is not the envelope fails the whole poll', async (t) => {
  for (const body of ['not json', '{"alerts": 5}', '[]', '{"timestamp": "yesterday", "alerts": []}']) {
    const result = normalizeAlertsJson(Buffer.from(body), input());
    t.equal(result.ok, false, body);
  }
});

t.test(
  'alerts-json: a file dated years ago or ahead is rejected whole, unless old snapshots are allowed',
  async (t) => {
    const file = (timestamp: number) =>
      Buffer.from(
        JSON.stringify({
          timestamp,
          alerts: [
            { id: 'a', header: 'Detour', informed_entities: [{ route_id: '66' }] },
            { id: 'b', header: 'x', informed_entities: [{ route_id: '66' }] },
          ],
        }),
      );
    const old = normalizeAlertsJson(file(NOW_S - 3 * 365 * 86_400), input());
    t.ok(old.ok);
    if (!old.ok) return;
    t.same(old.poll.alerts, [], 'no alert from a years-old file: it would resolve nothing and announce stale news');
    t.same(old.poll.rejected, { timestamp_too_old: 2 });
    t.equal(old.poll.rejection?.reason, 'timestamp_too_old');
    const future = normalizeAlertsJson(file(NOW_S + 7200), input());
    t.match(future, {
      ok: true,
      poll: { alerts: [], rejected: { timestamp_future: 2 }, rejection: { reason: 'timestamp_future' } },
    });
    const allowed = normalizeAlertsJson(file(NOW_S - 3 * 365 * 86_400), { ...input(), allow_old_snapshots: true });
    t.match(allowed, { ok: true, poll: { rejected: {}, header_timestamp_ms: (NOW_S - 3 * 365 * 86_400) * 1000 } });
    t.equal(allowed.ok && allowed.poll.alerts.length, 2);
  },
);
