// The event contract (issue 15): the demo network runs for 60 s of simulated time through the
// real pipeline, and every event it produces, as the event stream sends it and as a loopback
// webhook receiver gets it, validates against the committed (generated) OpenAPI document's
// schemas: the stream's `x-sse-events` by event name, the `webhooks:` request body by type.
// The minute is chosen so that one of the simulator's alerts changes within it: every type,
// alert.updated included, comes out of the pipeline.
import t from 'tap';
import { parseConfig } from '../core/config.ts';
import { domainEvent, EVENT_TYPES, type EventType } from '../core/events.ts';
import { exportEvent } from '../exports/job.ts';
import type { ExportManifest } from '../exports/manifests.ts';
import { demoConfig } from '../fixtures/demo-config.ts';
import { generateDemoNetwork, type DemoNetworkInfo } from '../fixtures/demo-network.ts';
import { alertEntitiesAt } from '../fixtures/sim-alerts.ts';
import { startSimulator } from '../fixtures/simulator.ts';
import { createPipeline } from '../pipeline/ingest.ts';
import { ruleChangeData } from '../pipeline/quality/health.ts';
import { importGtfs } from '../store/gtfs-import.ts';
import { createHistoryWriter } from '../store/history-writer.ts';
import { reliabilityEvent } from '../store/reliability/job.ts';
import { loadScheduleIndex } from '../store/schedule-index.ts';
import { createWebhooks } from '../webhooks/index.ts';
import { openSse } from './support/sse-client.ts';
import { startStreamHarness } from './support/streaming.ts';
import { startReceiver, verifyDelivery } from './support/webhooks.ts';
import { silentLogger } from './support/logs.ts';
import { closedOpenApi, type Json } from './support/closed-openapi.ts';

const { doc, validator: validatorFor } = closedOpenApi();

const streamMedia = ((((doc.paths as Json)['/api/v1/events/stream'] as Json).get as Json).responses as Json)[
  '200'
] as Json;
const sseEvents = (((streamMedia.content as Json)['text/event-stream'] as Json)['x-sse-events'] ?? {}) as Record<
  string,
  { $ref: string }
>;
// Tuesday 2025-06-17, 08:00 in America/Chicago: rush hour, trips running and canceled
const RUSH_HOUR = Date.parse('2025-06-17T13:00:00Z');
// the simulator's alerts feed changes once per 30 s snapshot
const ALERTS_TICK_MS = 30_000;

/**
 * The first alerts snapshot from `fromMs` on in which an alert already in the feed has changed
 * (new text, an estimated end): the simulator's own update, which the pipeline announces as
 * alert.updated.
 */
function firstAlertUpdate(network: DemoNetworkInfo, fromMs: number): number {
  const seed = network.seed ?? 1;
  const at = (ms: number) =>
    new Map(alertEntitiesAt(network.model, seed, ms, network.timezone).map((e) => [String(e.id), JSON.stringify(e)]));
  let before = at(fromMs);
  for (let ms = fromMs + ALERTS_TICK_MS; ms < fromMs + 6 * 3_600_000; ms += ALERTS_TICK_MS) {
    const now = at(ms);
    if ([...now].some(([id, json]) => before.has(id) && before.get(id) !== json)) return ms;
    before = now;
  }
  throw new Error('no demo alert changes within 6 h of rush hour');
}

t.test(
  'every event of 60 s of the demo validates against the generated document, on the stream and on webhooks',
  async (t) => {
    t.ok(Object.keys(sseEvents).length >= EVENT_TYPES.length, 'the stream operation names a schema per event');
    for (const type of EVENT_TYPES) t.ok((doc.webhooks as Json)[type], `webhooks: ${type}`);

    const network = generateDemoNetwork(t.testdir(), { seed: 1, startDate: '2025-06-14', endDate: '2025-06-21' });
    // one alerts snapshot before the change: the feed shows the alert at 0–10 s and, back up at 45 s, changed
    const update = firstAlertUpdate(network, RUSH_HOUR);
    const START = update - ALERTS_TICK_MS;
    t.comment(`an alert changes at ${new Date(update).toISOString()}`);
    const clock = { ms: START };
    const sim = await startSimulator({ network, now: () => clock.ms, badBodyEvery: 0, alertsTickMs: ALERTS_TICK_MS });
    t.teardown(() => sim.stop());
    // a feed is stale 15 s after its data stops changing, so one taken down goes stale and recovers within the minute
    const overrides = {
      signing_secret: 'test-secret-0123456789abcdef',
      freshness: { stale_after_s: 15, expired_after_s: 40 },
      // every event of the minute is delivered: as many at once as the worker allows
      webhooks: { allow_private_targets: true, max_concurrency_per_endpoint: 32 },
    };
    const config = parseConfig({ ...demoConfig(sim), ...overrides });

    const h = await startStreamHarness({ config: overrides, quiet: true });
    t.teardown(() => h.close());
    await importGtfs(h.db, 'demo', sim.scheduleSource);
    const schedule = await loadScheduleIndex(h.db, 'demo');

    const receiver = await startReceiver();
    t.teardown(() => receiver.close());
    const webhooks = createWebhooks({ db: h.db, bus: h.bus, config, log: silentLogger });
    const endpoint = await webhooks.createEndpoint('key_contract', {
      url: `${receiver.url}/all`,
      filters: { event_types: [...EVENT_TYPES] },
    });
    await webhooks.start();
    t.teardown(() => webhooks.stop());

    const stream = await openSse(`${h.url}/api/v1/events/stream`, { authorization: `Bearer ${await h.key('max')}` });
    t.teardown(() => stream.close());
    t.equal(stream.status, 200);

    let published = 0;
    t.teardown(
      h.bus.subscribe((batch) => {
        published += batch.length;
      }),
    );
    const pipeline = createPipeline({
      config,
      bus: h.bus,
      history: createHistoryWriter(h.db),
      scheduleFor: () => schedule,
      now: () => clock.ms,
      log: silentLogger,
    });
    t.teardown(() => pipeline.stop());

    // 60 s in 5 s steps, each feed polled on its interval; the alerts feed is down from 15 s to 45 s
    for (let s = 0; s <= 60; s += 5) {
      clock.ms = START + s * 1000;
      if (s === 15) sim.setFeedDown('alerts', 'down');
      if (s === 45) sim.setFeedDown('alerts', 'ok');
      await pipeline.pollOnce('demo-vehicles');
      if (s % 10 === 0)
        for (const id of ['demo-trip-updates', 'demo-alerts', 'demo-notices']) await pipeline.pollOnce(id);
      else await pipeline.pollOnce('demo-alerts');
    }
    // what the demo publishes on a longer clock, through the same bus: a finalized day, export files, alerts of a
    // removed feed
    h.bus.publish(
      reliabilityEvent(
        {
          service_date: '2025-06-16',
          trips: 2,
          modes: ['rail', 'bus'],
          route_ids: ['12', 'RED'],
          routes: [
            {
              schedule_id: 'demo',
              mode: 'rail',
              route_id: 'RED',
              scheduled: 1,
              delivered: 1,
              canceled: 0,
              unobserved: 0,
            },
            {
              schedule_id: 'demo',
              mode: 'bus',
              route_id: '12',
              scheduled: 1,
              delivered: 0,
              canceled: 1,
              unobserved: 0,
            },
          ],
        },
        clock.ms,
      ),
    );
    const manifest: ExportManifest = {
      id: 'alerts-2025-06-16.parquet',
      dataset: 'alerts',
      part: 'alerts',
      service_date: '2025-06-16',
      format: 'parquet',
      state: 'ready',
      file_path: 'x',
      rows: 10,
      bytes: 100,
      sha256: 'ab',
      schema: [],
      error: null,
      attempts: 1,
      queued_at: '2025-06-17T12:00:00.000Z',
      started_at: '2025-06-17T12:00:01.000Z',
      created_at: '2025-06-17T12:00:02.000Z',
      updated_at: '2025-06-17T12:00:02.000Z',
    };
    h.bus.publish(exportEvent(manifest, clock.ms));
    h.bus.publish(exportEvent({ ...manifest, state: 'failed', error: 'disk full', created_at: null }, clock.ms));
    pipeline.state.removeFeed('demo-notices', clock.ms);
    // a feed rule stops firing after clean snapshots in a row: the demo's rules fire throughout its minute
    h.bus.publish(
      domainEvent(
        'feed.rule_cleared',
        clock.ms,
        { modes: ['bus'] },
        ruleChangeData('demo-trip-updates', {
          rule: {
            rule: 'W002',
            total: 76,
            last: 0,
            example: 'tu-1',
            last_seen_ms: clock.ms - 30_000,
            firing_since_ms: null,
            clean: 3,
          },
          firing: false,
          since_ms: START,
        }),
      ),
    );

    await new Promise((resolve) => setImmediate(resolve));
    const expected = published;
    t.ok(expected > 100, `the demo published ${expected} events`);
    await stream.waitFor((events) => events.filter((e) => e.event !== 'reset').length >= expected, 30_000);
    await receiver.waitFor(expected, 60_000);

    const seen = { stream: new Map<string, number>(), webhook: new Map<string, number>() };
    let bad = 0;
    const check = (channel: 'stream' | 'webhook', name: string, ref: string | undefined, body: unknown) => {
      seen[channel].set(name, (seen[channel].get(name) ?? 0) + 1);
      if (!ref) {
        bad++;
        t.fail(`${channel}: no schema for ${name}`);
        return;
      }
      const validate = validatorFor(ref);
      if (!validate(body) && bad++ < 10)
        t.fail(`${channel}: ${name} does not validate`, { errors: validate.errors?.slice(0, 3), body });
    };
    for (const e of stream.events) check('stream', e.event, sseEvents[e.event]?.$ref, JSON.parse(e.data));
    for (const req of receiver.requests) {
      const body = verifyDelivery(endpoint.secret, req, req.at) as { type: string; id: string };
      t.equal(req.headers['webhook-id'], body.id);
      const webhook = ((doc.webhooks as Json)[body.type] as Json | undefined)?.post as Json | undefined;
      check(
        'webhook',
        body.type,
        webhook && `#/webhooks/${body.type}/post/requestBody/content/application~1json/schema`,
        body,
      );
    }
    t.equal(bad, 0, 'every event validates');
    t.equal(receiver.requests.length, stream.events.length, 'the stream and the webhook endpoint got the same events');
    const report = (m: Map<string, number>) => Object.fromEntries([...m].sort());
    t.comment(`stream ${JSON.stringify(report(seen.stream))}`);
    for (const type of EVENT_TYPES as readonly EventType[]) {
      t.ok(seen.stream.has(type), `the stream carried ${type}`);
      t.ok(seen.webhook.has(type), `a webhook delivered ${type}`);
    }
  },
);
