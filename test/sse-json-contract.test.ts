// The stream form of the JSON endpoints against the committed (generated) OpenAPI document: every
// `reset`, `add`, `update` and `remove` an alert, vehicle and rail arrival stream sends validates
// against the schema its operation's `x-sse-events` names for that event (closed, as in
// test/event-contract.test.ts: a field the document does not list fails).
import type { ValidateFunction } from 'ajv/dist/2020.js';
import t from 'tap';
import { makeAlert, makeArrival, makeVehicle } from './support/fake-live.ts';
import { bearer } from './support/harness.ts';
import { openSse } from './support/sse-client.ts';
import { startStreamHarness } from './support/streaming.ts';
import { closedOpenApi, type Json } from './support/closed-openapi.ts';

const { doc, validator } = closedOpenApi();

const PATHS = ['/api/v1/alerts', '/api/v1/bus/realtime', '/api/v1/rail/realtime'];

function validatorsOf(path: string): Map<string, ValidateFunction> {
  const media = (((((doc.paths as Json)[path] as Json).get as Json).responses as Json)['200'] as Json).content as Json;
  const events = (media['text/event-stream'] as Json)['x-sse-events'] as Json;
  const pointer = `/paths/${path.replace(/\//g, '~1')}/get/responses/200/content/text~1event-stream/x-sse-events`;
  return new Map(Object.keys(events).map((name) => [name, validator(`#${pointer}/${name}`)]));
}

t.test("every event of the JSON endpoints' streams validates against its x-sse-events schema", async (t) => {
  const h = await startStreamHarness({ quiet: true });
  t.teardown(() => h.close());
  const key = await h.key('max');
  const streams = await Promise.all(
    PATHS.map(async (path) => ({
      path,
      conn: await openSse(`${h.url}${path}?format=sse&limit=100`, bearer(key)),
      validators: validatorsOf(path),
    })),
  );
  for (const s of streams) t.teardown(() => s.conn.close());
  for (const s of streams) {
    t.equal(s.conn.status, 200, `${s.path} streams`);
    t.same([...s.validators.keys()], ['reset', 'add', 'update', 'remove'], `${s.path}: a schema per event name`);
    t.notOk(s.validators.get('add')!({ id: 'x', type: 'x' }), `${s.path}: a bare id is no item`);
    await s.conn.waitFor((events) => events.some((e) => e.event === 'reset'));
  }

  // one of each change in each result: an item edited, one added, one gone
  h.live.change((live) => {
    live.alertList = [
      ...live.alertList
        .filter((a) => a.id !== 'alerts:a5')
        .map((a) => (a.id === 'alerts:a1' ? { ...a, header: { en: 'Edited' }, version: a.version + 1 } : a)),
      makeAlert({ id: 'alerts:new', modes: ['bus'], routes: ['39'] }),
    ];
    live.vehicleList = [
      ...live.vehicleList
        .filter((v) => v.vehicle_id !== 'b4')
        .map((v) => (v.vehicle_id === 'b2' ? { ...v, lat: v.lat + 0.01 } : v)),
      makeVehicle({ vehicle_id: 'b9', route_id: '66' }),
    ];
    live.arrivalList = [
      ...live.arrivalList
        .filter((a) => a.trip_id !== 'T2')
        .map((a) =>
          a.trip_id === 'T1' && a.stop_sequence === 1
            ? { ...a, predicted_ms: a.predicted_ms! + 60_000, delay_s: 120 }
            : a,
        ),
      makeArrival({ trip_id: 'T9', station_id: 'place-dwnxg', stop_sequence: 5 }),
    ];
  });
  const names = (events: readonly { event: string }[]) => new Set(events.map((e) => e.event));
  for (const s of streams) {
    await s.conn.waitFor((events) => ['add', 'update', 'remove'].every((n) => names(events).has(n)));
    let bad = 0;
    for (const e of s.conn.events) {
      const validate = s.validators.get(e.event);
      if (!validate) {
        t.fail(`${s.path}: no schema for ${e.event}`);
        continue;
      }
      const body = JSON.parse(e.data) as unknown;
      if (!validate(body) && bad++ < 5)
        t.fail(`${s.path}: ${e.event} does not validate`, { errors: validate.errors?.slice(0, 3), body });
    }
    t.equal(bad, 0, `${s.path}: ${s.conn.events.map((e) => e.event).join(', ')} all validate`);
  }
});
