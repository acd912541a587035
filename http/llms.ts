// /llms.txt (the llmstxt.org shape: title, summary, link lists) and /llms-full.txt (every
// operation spelled out), both from the OpenAPI document.
import { operations } from './doc-model.ts';
import { UNKNOWN_IDS_RULE } from './known-ids.ts';
import { WINDOW_RULE } from './plans.ts';

type Json = Record<string, unknown>;

function info(doc: Json): { title: string; version: string; description: string } {
  const i = (doc.info ?? {}) as Json;
  return { title: String(i.title ?? 'API'), version: String(i.version ?? ''), description: String(i.description ?? '') };
}

export function renderLlmsTxt(doc: Json): string {
  const { title, version } = info(doc);
  const ops = operations(doc);
  const tags = [...new Set(ops.map((o) => o.tags[0] ?? 'Other'))];
  const lines = [
    `# ${title}`,
    '',
    `> Version ${version}. A transit data API: service alerts, realtime rail arrivals and bus/streetcar vehicle positions, reliability rollups, event streams and webhooks. JSON over HTTPS, keys as \`Authorization: Bearer tk_live_…\`.`,
    '',
    'Key facts:',
    '- Plans: Free 20, Regular 600, Max 6000 requests per sliding 5 minutes; `limit` max 20/100/1000 (400 `limit_exceeds_plan` above), default 20.',
    '- Lists paginate with `limit` and an opaque `cursor`; follow `links.next` until null.',
    '- Errors are RFC 9457 problem+json with a stable `code` and `request_id`; unknown query parameters are 400.',
    '- Realtime and alert endpoints stream with `Accept: text/event-stream` or `format=sse`.',
    '- Responses carry ETag; send If-None-Match to get 304, which does not count against the window.',
    `- What counts: ${WINDOW_RULE}`,
    `- Unknown ids: ${UNKNOWN_IDS_RULE}`,
    '',
    '## Docs',
    '',
    '- [OpenAPI document](/openapi.yaml): the authority for every endpoint, parameter and field',
    '- [Full guide for LLMs](/llms-full.txt): every operation with parameters, fields and examples',
    '- [Rendered reference](/docs): the same operations as HTML',
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
        lines.push(`- \`${p.name}\` (${p.in}, ${p.type}${p.required ? ', required' : ''}): ${p.description.replace(/\n+/g, ' ')}`);
      }
      lines.push('');
    }
    lines.push('Responses:');
    for (const r of op.responses) {
      lines.push(`- ${r.status}: ${r.description.replace(/\n+/g, ' ')}${r.contentTypes.length ? ` (${r.contentTypes.join(', ')})` : ''}`);
      if (r.status.startsWith('2')) {
        for (const f of r.fields) lines.push(`  - \`${f.name}\`: ${f.type}${f.description ? `. ${f.description.replace(/\n+/g, ' ')}` : ''}`);
      }
    }
    lines.push('', 'Example:', '```sh', ...op.curl, '```', '');
  }
  return lines.join('\n');
}
