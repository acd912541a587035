// GET /docs: one self-contained HTML page (no scripts or styles from elsewhere) listing every
// operation with its parameters, responses and a curl example, then the events (envelope, stream,
// webhooks, each type's data fields), all read from the OpenAPI document.
import { escapeHtml } from '../http/html.ts';
import { operations, type DocOperation } from './model.ts';
import { eventsModel, eventsProse, type DocEvents, type DocField } from './events-model.ts';
import { cspHash } from '../http/headers.ts';

/** The little Markdown the descriptions use: paragraphs, `- ` lists, `code`, **bold**. */
export function markdown(text: string): string {
  const inline = (s: string) =>
    escapeHtml(s)
      .replace(/`([^`]+)`/g, '<code>$1</code>')
      .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
  return text
    .split(/\n{2,}/)
    .map((block) => {
      // consecutive `- ` lines form a list; other lines stay prose, in their order
      let html = '';
      let prose: string[] = [];
      let items: string[] = [];
      const flush = () => {
        if (prose.length) html += `<p>${prose.map(inline).join('<br>')}</p>`;
        if (items.length) html += `<ul>${items.map((l) => `<li>${inline(l)}</li>`).join('')}</ul>`;
        prose = [];
        items = [];
      };
      for (const line of block.split('\n')) {
        if (line.startsWith('- ')) {
          if (prose.length) flush();
          items.push(line.slice(2));
        } else {
          if (items.length) flush();
          prose.push(line);
        }
      }
      flush();
      return html;
    })
    .join('\n');
}

function anchor(op: DocOperation): string {
  return `op-${op.id.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}

function operationHtml(op: DocOperation): string {
  const params = op.parameters.length
    ? `<table><thead><tr><th>Name</th><th>In</th><th>Type</th><th>Description</th></tr></thead><tbody>${op.parameters
        .map(
          (p) => `
        <tr><td><code>${escapeHtml(p.name)}</code>${p.required ? ' <span class="req">required</span>' : ''}</td>
        <td>${escapeHtml(p.in)}</td><td><code>${escapeHtml(p.type)}</code></td>
        <td>${markdown(p.description)}</td></tr>`,
        )
        .join('')}
      </tbody></table>`
    : '<p class="muted">No parameters.</p>';
  const head = '<thead><tr><th>Status</th><th>Description</th><th>Content</th></tr></thead>';
  const responses = `<table>${head}<tbody>${op.responses
    .map(
      (r) => `
      <tr><td>${statusCell(r.status)}</td><td>${markdown(r.description)}</td>
      <td>${r.contentTypes.map((c) => `<code>${escapeHtml(c)}</code>`).join(' ')}</td></tr>`,
    )
    .join('')}
    </tbody></table>`;
  return `
  <section class="operation" id="${anchor(op)}" data-operation="${escapeHtml(op.id)}">
    <h3><span class="method m-${op.method.toLowerCase()}">${op.method}</span>
      <code class="path">${escapeHtml(op.path)}</code></h3>
    <p class="summary">${escapeHtml(op.summary)}${op.auth ? '' : ' <span class="tag">public</span>'}</p>
    ${markdown(op.description)}
    <h4>Parameters</h4>${params}
    <h4>Responses</h4>${responses}
    <h4>Example</h4><pre>${op.curl.map(escapeHtml).join('\n')}</pre>
  </section>`;
}

/** A response status, coloured by its class (2xx, 4xx …). */
function statusCell(status: string): string {
  return `<span class="status s${escapeHtml(status[0] ?? '')}">${escapeHtml(status)}</span>`;
}

function resetFields(fields: readonly DocField[]): string {
  return fields.length ? `<h4>reset</h4>${fieldsTable(fields, 'reset fields')}` : '';
}

function fieldsTable(fields: readonly DocField[], caption: string): string {
  if (!fields.length) return '';
  const head = '<thead><tr><th>Field</th><th>Type</th><th>Description</th></tr></thead>';
  return `<table aria-label="${escapeHtml(caption)}">${head}<tbody>${fields
    .map(
      (f) => `
      <tr><td><code>${escapeHtml(f.name)}</code></td><td><code>${escapeHtml(f.type)}</code></td>
        <td>${markdown(f.description)}</td></tr>`,
    )
    .join('')}
    </tbody></table>`;
}

/** The Events section: envelope, delivery on the stream and as webhooks, then each type with its data fields. */
function eventsHtml(events: DocEvents): string {
  if (!events.types.length) return '';
  const prose = eventsProse(events);
  const op = events.stream;
  const stream = op
    ? `<h3 id="events-stream">Event stream</h3>${markdown(prose.stream)}${resetFields(op.reset)}
    <p>Filters, limits and resume details:
      <a href="#op-${escapeHtml(op.operationId)}">${op.method} ${escapeHtml(op.path)}</a>.</p>`
    : '';
  const responses = events.webhooks.responses
    .map((r) => `<tr><td>${statusCell(r.status)}</td><td>${markdown(r.description)}</td></tr>`)
    .join('');
  return `
  <section id="events" class="events">
    <h2>Events</h2>
    ${markdown(prose.intro)}
    <h3 id="events-envelope">Envelope</h3>${fieldsTable(events.envelope, 'envelope fields')}
    ${stream}
    <h3 id="events-webhooks">Webhooks</h3>${markdown(prose.webhooks)}
    <h4>Headers</h4>${fieldsTable(events.webhooks.headers, 'webhook headers')}
    <h4>Your answer</h4><table><thead><tr><th>Status</th><th>Effect</th></tr></thead><tbody>${responses}</tbody></table>
    ${events.types
      .map(
        (e) => `
    <section class="event" id="${e.anchor}" data-event-type="${escapeHtml(e.type)}">
      <h3><code>${escapeHtml(e.type)}</code></h3>
      ${markdown(e.description)}
      <p class="muted">Schema <code>${escapeHtml(e.schema)}</code>; <code>data</code> is
        <code>${escapeHtml(e.dataSchema)}</code>.</p>
      ${fieldsTable(e.data, `${e.type} data fields`)}
    </section>`,
      )
      .join('')}
  </section>`;
}

const STYLE = `
  :root { color-scheme: light; --fg:#1b1f24; --muted:#5b6570; --line:#d8dee4; --bg:#fff; --side:#f6f8fa; }
  * { box-sizing: border-box; }
  body { margin:0; font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif; color:var(--fg);
  background:var(--bg); display:flex; }
  nav { width:300px; flex:none; height:100vh; position:sticky; top:0; overflow:auto; background:var(--side);
  border-right:1px solid var(--line); padding:16px; }
  nav h2 { font-size:13px; text-transform:uppercase; color:var(--muted); margin:16px 0 4px; }
  nav a { display:block; color:var(--fg); text-decoration:none; padding:2px 0; font-size:13px; }
  nav a:hover { text-decoration:underline; }
  main { flex:1; min-width:0; padding:24px 40px; max-width:1100px; }
  code { font-family:ui-monospace,SFMono-Regular,Menlo,monospace; font-size:13px; background:#eff1f3; padding:1px 4px;
  border-radius:4px; }
  pre { background:#0d1117; color:#e6edf3; padding:12px; border-radius:6px; overflow:auto; font-size:13px; }
  table { border-collapse:collapse; width:100%; margin:8px 0; }
  th, td { border:1px solid var(--line); padding:6px 8px; text-align:left; vertical-align:top; font-size:14px; }
  th { background:var(--side); }
  td p { margin:0; }
  .event { border-top:1px dashed var(--line); margin-top:16px; }
  .operation { border-top:1px solid var(--line); padding-top:8px; margin-top:24px; }
  .method { display:inline-block; min-width:56px; text-align:center; color:#fff; border-radius:4px; padding:2px 6px;
  font-size:13px; }
  .m-get { background:#1f6feb; } .m-post { background:#2da44e; } .m-delete { background:#cf222e; }
  .m-patch, .m-put { background:#9a6700; }
  .status { font-weight:600; } .s2, .s3 { color:#1a7f37; } .s4 { color:#9a6700; } .s5 { color:#cf222e; }
  .req { color:#cf222e; font-size:12px; } .tag { background:#ddf4ff; border-radius:8px; padding:0 6px; font-size:12px; }
  .muted { color:var(--muted); } .summary { font-size:16px; font-weight:600; }
  #filter { width:100%; padding:6px; border:1px solid var(--line); border-radius:6px; }
  @media (max-width: 800px) { body { display:block; } nav { width:auto; height:auto; position:static; }
  main { padding:16px; } }
`;

// filters the operation list in place; the page is complete without it
const SCRIPT = `
  document.getElementById('filter').addEventListener('input', function (e) {
    var q = e.target.value.toLowerCase();
    document.querySelectorAll('.operation').forEach(function (s) {
      s.style.display = s.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
    });
  });
`;

/** Content-Security-Policy of /docs: its own inline style and filter script, nothing else, never framed. */
export const docsPageCsp = (): string =>
  [
    "default-src 'none'",
    `style-src ${cspHash(STYLE)}`,
    `script-src ${cspHash(SCRIPT)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

export function renderDocsPage(doc: Record<string, unknown>): string {
  const ops = operations(doc);
  const events = eventsModel(doc);
  const info = (doc.info ?? {}) as { title?: string; version?: string; description?: string };
  const tags = [...new Set(ops.map((o) => o.tags[0] ?? 'Other'))];
  const nav =
    tags
      .map(
        (tag) =>
          `<h2>${escapeHtml(tag)}</h2>${ops
            .filter((o) => (o.tags[0] ?? 'Other') === tag)
            .map((o) => `<a href="#${anchor(o)}">${o.method} ${escapeHtml(o.path)}</a>`)
            .join('')}`,
      )
      .join('') +
    (events.types.length
      ? `<h2><a href="#events">Event types</a></h2>` +
        events.types.map((e) => `<a href="#${e.anchor}">${escapeHtml(e.type)}</a>`).join('')
      : '');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>${escapeHtml(info.title ?? 'API')} ${escapeHtml(info.version ?? '')} documentation</title>
<style>${STYLE}</style></head>
<body>
<nav><input id="filter" type="search" placeholder="Filter operations" aria-label="Filter operations">${nav}
<h2>Machine-readable</h2><a href="/openapi.yaml">openapi.yaml</a><a href="/llms.txt">llms.txt</a>
<a href="/llms-full.txt">llms-full.txt</a></nav>
<main>
<h1>${escapeHtml(info.title ?? 'API')} <small class="muted">v${escapeHtml(info.version ?? '')}</small></h1>
${markdown(info.description ?? '')}
<p class="muted">${ops.length} operations. In the examples,
  set <code>BASE_URL</code> to this server's address and <code>TRANSIT_API_KEY</code> to your key.</p>
${ops.map(operationHtml).join('\n')}
${eventsHtml(events)}
</main>
<script>${SCRIPT}</script>
</body></html>`;
}
