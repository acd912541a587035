import { createHash } from 'node:crypto';
import t from 'tap';
import { z } from 'zod';
import { operations } from './model.ts';
import { escapeHtml } from '../http/html.ts';
import { docsPageCsp, markdown, renderDocsPage } from './page.ts';
import { renderLlmsFullTxt, renderLlmsTxt } from './llms.ts';
import { buildOpenApi, toYaml } from './openapi.ts';
import { defineRoute } from '../http/route.ts';
import type { JsonBody } from '../test/support/json.ts';

const routes = [
  defineRoute({
    id: 'createEndpoint',
    method: 'POST',
    path: '/api/v1/webhooks/endpoints',
    summary: 'Register <an> endpoint',
    tags: ['Webhooks'],
    auth: 'key',
    meter: 'request',
    successStatus: 201,
    errors: ['unsafe_target'],
    body: z.object({
      url: z.string().meta({ example: 'https://example.com/hook' }),
      description: z.string().optional(),
      retries: z.number().int(),
      enabled: z.boolean(),
      kinds: z.array(z.string()),
      mode: z.enum(['bus', 'rail']),
      filters: z.object({ modes: z.array(z.string()) }),
    }),
    response: z.object({ id: z.string(), secret: z.string().meta({ description: 'Shown once.' }) }),
    handler: () => ({ id: 'x', secret: 'y' }),
  }),
  defineRoute({
    id: 'listExports',
    method: 'GET',
    path: '/api/v1/history/exports',
    summary: 'Exports',
    tags: ['Exports'],
    auth: 'key',
    meter: 'request',
    plan: 'max',
    testKeys: false,
    paginated: true,
    response: z.object({ data: z.array(z.string()) }),
    handler: () => ({ data: [] }),
  }),
  defineRoute({
    id: 'eventStream',
    method: 'GET',
    path: '/api/v1/events/stream',
    summary: 'Events',
    tags: ['Streams'],
    auth: 'key',
    meter: 'connection-minute',
    stream: true,
    response: z.string(),
    handler: () => '',
  }),
  defineRoute({
    id: 'busReliability',
    method: 'GET',
    path: '/api/v1/bus/{route_id}/reliability',
    summary: 'Reliability',
    tags: ['Bus'],
    auth: 'key',
    meter: 'request',
    sse: true,
    testKeys: false,
    params: z.object({ route_id: z.string().meta({ example: '39' }) }),
    query: z.object({
      group: z.enum(['day', 'week']).optional(),
      from: z.string().meta({ description: 'First day.' }),
    }),
    response: z.object({ data: z.array(z.object({ delivered_pct: z.number().nullable() })) }),
    handler: () => ({ data: [] }),
  }),
  defineRoute({
    id: 'statusPage',
    method: 'GET',
    path: '/status',
    summary: 'Status',
    tags: ['Status'],
    auth: 'none',
    meter: null,
    contentType: 'text/html; charset=utf-8',
    response: z.string(),
    handler: () => '',
  }),
];

t.test('OpenAPI operations carry plan, meter, security and error responses', async (t) => {
  const doc = buildOpenApi(routes) as { paths: Record<string, Record<string, Record<string, JsonBody>>> };
  const create = doc.paths['/api/v1/webhooks/endpoints']!.post!;
  t.same(Object.keys(create.responses), ['201', '400', '401', '413', '415', '429', '500']);
  t.match(create.responses['400'].description, /`unsafe_target`/);
  t.ok(create.requestBody.required);
  const exports = doc.paths['/api/v1/history/exports']!.get!;
  t.equal(exports['x-plan'], 'max');
  t.match(exports.description, /Requires the max plan and a live key/);
  t.ok(exports.responses['403']);
  const stream = doc.paths['/api/v1/events/stream']!.get!;
  t.same(stream.security, [{ bearerAuth: [] }, { apiKeyQuery: [] }]);
  t.ok(stream.responses['200'].content['text/event-stream']);
  t.equal(stream['x-meter-unit'], 'connection-minute');
  const status = doc.paths['/status']!.get!;
  t.same(status.security, []);
  t.same(Object.keys(status.responses['200'].content), ['text/html']);
  t.match(status.description, /Public: no key/);
  const rel = doc.paths['/api/v1/bus/{route_id}/reliability']!.get!;
  t.match(rel.description, /Not available to test keys/);
  // the stream form: each event name's data schema, from the body and its items (inline: these test schemas have no
  // ids)
  const sse = rel.responses['200'].content['text/event-stream'];
  t.same(Object.keys(sse['x-sse-events']), ['reset', 'add', 'update', 'remove']);
  t.match(sse['x-sse-events'].add, { properties: { type: { const: 'reliability' } } });
  t.same(sse['x-sse-events'].remove.required, ['id', 'type']);
  t.ok(rel.parameters.find((p: { name: string; required?: boolean }) => p.name === 'from' && p.required));
  t.match(toYaml(doc), /^openapi: 3\.1\.0/);
});

t.test("the route table's order does not change the document (served and committed are one file)", async (t) => {
  const once = toYaml(buildOpenApi(routes));
  t.equal(toYaml(buildOpenApi([...routes].reverse())), once);
  t.equal(toYaml(buildOpenApi([routes[2]!, routes[0]!, routes[4]!, routes[1]!, routes[3]!])), once);
});

t.test('the operation model, docs page and LLM guides', async (t) => {
  const doc = buildOpenApi(routes);
  const ops = operations(doc);
  // the canonical order: declared tags first (Bus, Webhooks, Status), then the others by name
  t.same(
    ops.map((o) => o.id),
    ['busReliability', 'createEndpoint', 'statusPage', 'listExports', 'eventStream'],
  );
  const op = (id: string) => ops.find((o) => o.id === id)!;
  const create = op('createEndpoint');
  t.match(
    create.curl[0],
    new RegExp(
      String.raw`^curl -X POST -H "Authorization: Bearer \$TRANSIT_API_KEY" -H 'Content-Type: application\/json' ` +
        String.raw`-d '\{"url":"https:\/\/example.com\/hook","retries":1,"enabled":true,"kinds":\[\],"mode":"bus","` +
        String.raw`filters":\{"modes":\[\]\}\}' "\$BASE_URL\/api\/v1\/webhooks\/endpoints"$`,
    ),
  );
  const rel = op('busReliability');
  t.match(
    rel.curl[0],
    /\/api\/v1\/bus\/39\/reliability\?from=example"$/,
    'path examples and required query parameters',
  );
  t.match(rel.curl[1], /curl -N .* -H 'Accept: text\/event-stream'/);
  t.match(op('listExports').curl[0], /\?limit=20"$/);
  t.equal(op('statusPage').curl[0], 'curl "$BASE_URL/status"');
  t.match(create.responses.find((r) => r.status === '201')!.fields, [
    { name: 'id', type: 'string' },
    { name: 'secret', description: 'Shown once.' },
  ]);

  const html = renderDocsPage(doc);
  t.match(html, /Register &lt;an&gt; endpoint/, 'summaries are escaped');
  t.notMatch(html, /<an>/);
  t.equal((html.match(/<section class="operation"/g) ?? []).length, 5);
  t.match(html, /href="#op-busReliability"/);
  const llms = renderLlmsTxt(doc);
  t.match(llms, /^# Transit API\n\n> Version/);
  t.match(llms, /- \[POST \/api\/v1\/webhooks\/endpoints\]\(\/docs#op-createEndpoint\): Register <an> endpoint/);
  const full = renderLlmsFullTxt(doc);
  t.match(full, /## GET \/api\/v1\/bus\/\{route_id\}\/reliability/);
  t.match(full, /- `from` \(query, string, required\): First day\./);
  t.match(full, / {2}- `secret`: string\. Shown once\./);
});

t.test('markdown subset', async (t) => {
  t.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  t.equal(markdown('**Bold** and `code`'), '<p><strong>Bold</strong> and <code>code</code></p>');
  t.equal(markdown('Intro:\n- one\n- two\nAfter.'), '<p>Intro:</p><ul><li>one</li><li>two</li></ul><p>After.</p>');
  t.equal(markdown('a\n\nb'), '<p>a</p>\n<p>b</p>');
  t.equal(markdown('<script>'), '<p>&lt;script&gt;</p>');
});

t.test('/docs: its CSP allows exactly the inlined style and script, and denies framing', async (t) => {
  const html = renderDocsPage(buildOpenApi(routes));
  const sha = (text: string) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1]!);
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1]!);
  t.equal(scripts.length, 1, 'one inline script');
  t.equal(styles.length, 1, 'one inline style');
  t.notMatch(
    html,
    /<script[^>]+src=|<link[^>]+stylesheet|\sstyle="|\son[a-z]+="/i,
    'no other script, style or handler',
  );
  const csp = new Map(
    docsPageCsp()
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...values]) => [name!, values]),
  );
  t.same(csp.get('default-src'), ["'none'"]);
  t.same(csp.get('script-src'), [sha(scripts[0]!)]);
  t.same(csp.get('style-src'), [sha(styles[0]!)]);
  t.same(csp.get('frame-ancestors'), ["'none'"]);
  t.notMatch(docsPageCsp(), /unsafe|\*|https?:/, 'no wildcard, no unsafe-*, no other origin');
});
