// The Events section of /docs and llms-full.txt is generated from the document, whose events come
// from core/event-schemas.ts: every event type is listed with every field of its data, the
// envelope with every field of the envelope, and how the stream and webhooks deliver them.
import t from 'tap';
import type { z } from 'zod';
import { documentedOpenApi } from '../app/catalog.ts';
import { EVENT_DATA, EVENT_SCHEMAS, EVENT_TYPES } from '../core/event-schemas.ts';
import { eventAnchor, eventsModel } from '../docs/events-model.ts';
import { renderLlmsFullTxt } from '../docs/llms.ts';
import { renderDocsPage } from '../docs/page.ts';

const doc = documentedOpenApi('/');
const dataFields = (type: keyof typeof EVENT_DATA) => Object.keys((EVENT_DATA[type].data as z.ZodObject).shape);
const envelopeFields = Object.keys(EVENT_SCHEMAS['alert.created'].shape);

t.test("the model lists every event type with its data fields, in the schemas' order", async (t) => {
  const model = eventsModel(doc);
  t.same(
    model.types.map((e) => e.type),
    EVENT_TYPES,
  );
  for (const e of model.types) {
    const top = e.data.map((f) => f.name.replace(/\?$/, '')).filter((n) => !n.includes('.'));
    t.same(top, dataFields(e.type as keyof typeof EVENT_DATA), `${e.type}: every data field`);
    t.equal(e.schema, `Event.${e.type}`);
  }
  t.same(
    model.envelope.map((f) => f.name),
    envelopeFields,
  );
  t.match(model.stream, { path: '/api/v1/events/stream', operationId: 'streamEvents' });
  t.same(
    model.stream!.reset.map((f) => f.name),
    ['reason', 'earliest_id'],
  );
  t.same(
    model.webhooks.headers.map((h) => h.name),
    ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
  );
  t.match(model.webhooks.delivery, /retried/);
  t.ok(model.webhooks.responses.some((r) => r.status === '410'));
});

t.test('/docs has an #events section with every type and field', async (t) => {
  const html = renderDocsPage(doc);
  t.match(html, /<section id="events"/);
  t.match(html, /href="#events"/, 'linked from the navigation');
  const events = html.slice(html.indexOf('<section id="events"'));
  for (const name of envelopeFields) t.match(events, `<code>${name}</code>`, `envelope field ${name}`);
  for (const header of ['webhook-id', 'webhook-timestamp', 'webhook-signature'])
    t.match(events, `<code>${header}</code>`);
  t.match(events, /Last-Event-ID/);
  t.match(events, /event: reset/);
  t.match(events, /410/);
  for (const type of EVENT_TYPES) {
    const start = events.indexOf(`id="${eventAnchor(type)}"`);
    t.ok(start > 0, `${type} has a section`);
    const section = events.slice(start, events.indexOf('</section>', start));
    for (const name of dataFields(type)) t.match(section, new RegExp(`<code>${name}\\??</code>`), `${type}: ${name}`);
  }
});

t.test('llms-full.txt has the same Events section', async (t) => {
  const full = renderLlmsFullTxt(doc);
  const events = full.slice(full.indexOf('\n## Events\n'));
  t.ok(events.length > 1, 'an Events section');
  for (const name of envelopeFields) t.match(events, `- \`${name}\`: `);
  for (const type of EVENT_TYPES) {
    const start = events.indexOf(`\n### ${type}\n`);
    t.ok(start > 0, `${type} has a section`);
    const next = events.indexOf('\n### ', start + 1);
    const section = events.slice(start, next < 0 ? undefined : next);
    for (const name of dataFields(type)) t.match(section, new RegExp(`- \`${name}\\??\`: `), `${type}: ${name}`);
  }
  t.match(events, /- `webhook-signature`: /);
});
