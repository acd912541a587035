// /llms.txt (the llmstxt.org shape: title, summary, link lists) and /llms-full.txt (every
// operation spelled out, then the events: envelope, stream, webhooks, each type's data fields),
// both from the OpenAPI document.
import { operations } from './model.ts';
import { eventsModel, eventsProse, type DocField } from './events-model.ts';
import { UNKNOWN_IDS_RULE } from '../http/known-ids.ts';
import { WINDOW_RULE } from '../accounts/plans.ts';

type Json = Record<string, unknown>;

function info(doc: Json): { title: string; version: string; description: string } {
  const i = (doc.info ?? {}) as Json;
  return {
    title: String(i.title ?? 'API'),
    version: String(i.version ?? ''),
    description: String(i.description ?? ''),
  };
}

export function renderLlmsTxt(doc: Json): string {
  const { title, version } = info(doc);
  const ops = operations(doc);
  const tags = [...new Set(ops.map((o) => o.tags[0] ?? 'Other'))];
  const lines = [
    `# ${title}`,
    '',
    `> Version ${version}. A transit data API: service alerts, realtime rail arrivals and bus/streetcar vehicle ` +
      `positions, reliability rollups, event streams and webhooks. JSON over HTTPS, keys as ` +
      `\`Authorization: Bearer tk_live_…\`.`,
    '',
    'Key facts:',
    '- Plans: Free 20, Regular 600, Max 6000 requests per sliding 5 minutes; `limit` max 20/100/1000 (400 ' +
      '`limit_exceeds_plan` above), default 20.',
    '- Lists paginate with `limit` and an opaque `cursor`; follow `links.next` until null.',
    '- Errors are RFC 9457 problem+json with a stable `code` and `request_id`; unknown query parameters are 400.',
    '- Realtime and alert endpoints stream with `Accept: text/event-stream` or `format=sse`.',
    '- Responses carry ETag; send If-None-Match to get 304, which does not count against the window.',
    '- Send Accept-Encoding: br or gzip for compressed JSON (bodies of 1 KiB or more); each coding has its own ETag. ' +
      'Event streams are not compressed.',
    `- What counts: ${WINDOW_RULE}`,
    `- Unknown ids: ${UNKNOWN_IDS_RULE}`,
    '',
    '## Docs',
    '',
    '- [OpenAPI document](/openapi.yaml): the authority for every endpoint, parameter and field',
    '- [Full guide for LLMs](/llms-full.txt): every operation with parameters, fields and examples',
    '- [Rendered reference](/docs): the same operations as HTML',
    "- [Events](/docs#events): the event envelope and every event type's fields, on the stream and as webhooks",
    '',
  ];
  for (const tag of tags) {
    lines.push(`## ${tag}`, '');
    for (const op of ops.filter((o) => (o.tags[0] ?? 'Other') === tag)) {
      lines.push(`- [${op.method} ${op.path}](/docs#op-${op.id}): ${op.summary}`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

export function renderLlmsFullTxt(doc: Json): string {
  const { title, version, description } = info(doc);
  const lines = [`# ${title} (version ${version}): full guide`, '', description, ''];
  for (const op of operations(doc)) {
    lines.push(`## ${op.method} ${op.path}`, '', `${op.summary}.`, '', op.description, '');
    lines.push(`Authentication: ${op.auth ? 'API key (Authorization: Bearer)' : 'none'}.`, '');
    if (op.parameters.length) {
      lines.push('Parameters:');
      for (const p of op.parameters) {
        lines.push(
          `- \`${p.name}\` (${p.in}, ${p.type}${p.required ? ', required' : ''}): ` +
            `${p.description.replace(/\n+/g, ' ')}`,
        );
      }
      lines.push('');
    }
    lines.push('Responses:');
    for (const r of op.responses) {
      lines.push(
        `- ${r.status}: ` +
          `${r.description.replace(/\n+/g, ' ')}${r.contentTypes.length ? ` (${r.contentTypes.join(', ')})` : ''}`,
      );
      if (r.status.startsWith('2')) {
        for (const f of r.fields)
          lines.push(`  - \`${f.name}\`: ${f.type}${f.description ? `. ${f.description.replace(/\n+/g, ' ')}` : ''}`);
      }
    }
    lines.push('', 'Example:', '```sh', ...op.curl, '```', '');
  }
  lines.push(...eventLines(doc));
  return lines.join('\n');
}

const fieldLine = (f: DocField) => `- \`${f.name}\`: ${f.type}${f.description ? `. ${f.description}` : ''}`;

/** The Events section of llms-full.txt (the same model as the docs page's #events). */
function eventLines(doc: Json): string[] {
  const events = eventsModel(doc);
  if (!events.types.length) return [];
  const prose = eventsProse(events);
  const lines = ['## Events', '', prose.intro, '', 'Envelope fields:', ...events.envelope.map(fieldLine), ''];
  if (events.stream) {
    lines.push(`**On the stream.** ${prose.stream}`, '');
    if (events.stream.reset.length) lines.push('`reset` data fields:', ...events.stream.reset.map(fieldLine), '');
  }
  lines.push(
    `**As webhooks.** ${prose.webhooks}`,
    '',
    'Webhook headers:',
    ...events.webhooks.headers.map(fieldLine),
    '',
    'Your answer:',
  );
  lines.push(...events.webhooks.responses.map((r) => `- ${r.status}: ${r.description}`), '');
  for (const e of events.types) {
    lines.push(
      `### ${e.type}`,
      '',
      e.description,
      '',
      `Schema \`${e.schema}\`; \`data\` (\`${e.dataSchema}\`) fields:`,
      ...e.data.map(fieldLine),
      '',
    );
  }
  return lines;
}
