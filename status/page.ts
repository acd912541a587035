// The /status page shell: one self-contained document (no asset from anywhere), its sections
// rendered on the server, and a small script (status/client/page.ts) that swaps in sections
// streamed from /status/stream and keeps ages ticking. A CSP allows exactly this style and this script.
import { createHash } from 'node:crypto';
import { browserScript } from '../http/browser-script.ts';
import { escapeHtml as esc } from '../http/html.ts';
import type { SectionId } from './render.ts';
import type { StatusDocument } from './schema.ts';
import { cspHash } from '../http/headers.ts';

const STYLE = `
:root{color-scheme:light dark;--bg:#f6f7f9;--fg:#1b1f24;--muted:#5b6470;--card:#fff;--line:#dde1e6;
--ok:#1a7f37;--warn:#b35900;--bad:#cf222e;--unk:#6e7781;--none:#d0d7de}
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--card:#161b22;--line:#30363d;
--ok:#3fb950;--warn:#d29922;--bad:#f85149;--unk:#8b949e;--none:#30363d}}
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;background:var(--bg);color:var(--fg)}
main{max-width:1120px;margin:0 auto;padding:16px}
.top{display:flex;flex-wrap:wrap;align-items:baseline;justify-content:space-between;gap:8px}
h1{font-size:1.4rem;margin:.2rem 0}h2{font-size:1.15rem;margin:1.6rem 0 .6rem}h3{font-size:1rem;margin:0}
h4{font-size:.9rem;margin:.8rem 0 .3rem}
#live{font-size:.85rem;color:var(--muted)}#live.on::before{content:"● ";color:var(--ok)}#live.off::before{content:"● ";
color:var(--bad)}
.banner{display:flex;flex-wrap:wrap;align-items:center;gap:.4rem .8rem;padding:14px 16px;border-radius:10px;color:#fff;
background:var(--unk)}
.banner.s-operational{background:var(--ok)}.banner.s-degraded{background:var(--warn)}
.banner.s-down{background:var(--bad)}
.banner strong{font-size:1.05rem}.banner .meta{font-size:.85rem;opacity:.9}
.dot{width:10px;height:10px;border-radius:50%;background:#fff}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:12px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px;min-width:0}
.card header{display:flex;justify-content:space-between;align-items:center;gap:8px}
.card h3{overflow-wrap:anywhere}
.reason{margin:.3rem 0 .5rem;color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
.badge{display:inline-block;padding:1px 8px;border-radius:999px;font-size:.78rem;font-weight:600;color:#fff;
background:var(--unk);white-space:nowrap}
.s-operational.badge{background:var(--ok)}.s-degraded.badge{background:var(--warn)}.s-down.badge{background:var(--bad)}
.facts{display:grid;grid-template-columns:1fr 1fr;gap:6px 12px;margin:.4rem 0}
.facts div{min-width:0}.facts dt{font-size:.75rem;color:var(--muted)}.facts dd{margin:0;overflow-wrap:anywhere}
.fresh-stale{color:var(--warn)}.fresh-expired{color:var(--bad)}
.spark{margin:.5rem 0 0}.spark svg{display:block;width:100%;height:40px}
.spark rect.ok{fill:var(--ok)}.spark rect.warn{fill:var(--warn)}.spark rect.bad{fill:var(--bad)}
.spark rect.none{fill:var(--none)}
.spark figcaption{display:flex;justify-content:space-between;font-size:.7rem;color:var(--muted)}
.table{overflow-x:auto;position:relative}table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:4px 6px;border-bottom:1px solid var(--line)}td{font-variant-numeric:tabular-nums}
.sources,.incidents,.findings{list-style:none;margin:0;padding:0}.sources li,.incidents li,.findings li{padding:4px 0;
border-bottom:1px solid var(--line);overflow-wrap:anywhere}
.findings code{font-weight:600}.f-error code{color:var(--bad)}.f-warning code{color:var(--warn)}
.findings-none{margin:.3rem 0}
small{color:var(--muted)}.empty{color:var(--muted)}
table.days{width:auto}table.days th{font-weight:500;font-size:.8rem}table.days thead th{font-size:.68rem;padding:2px;
text-align:center;white-space:nowrap}table.days thead th:first-child{text-align:left}
td.day{position:relative;width:28px;min-width:22px;height:22px;padding:0;border:2px solid var(--bg);
background:var(--none)}
td.day.d-operational,.key.d-operational{background:var(--ok)}td.day.d-degraded,.key.d-degraded{background:var(--warn)}
td.day.d-down,.key.d-down{background:var(--bad)}.key.d-none{background:var(--none)}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(320px,1fr));gap:12px;align-items:start}
.legend{font-size:.8rem;color:var(--muted)}.key{display:inline-block;width:10px;height:10px;border-radius:2px;
margin:0 3px 0 8px}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0)}
footer{margin:2rem 0 1rem;font-size:.8rem;color:var(--muted)}
@media (max-width:480px){main{padding:10px}.grid,.pair{grid-template-columns:1fr}}
`;

/** The page's script (status/client/page.ts, bundled: http/browser-script.ts). */
const script = (): string => browserScript('status/client/page.ts');

/** Content-Security-Policy of the page: nothing but its own inline style and script, and the stream. */
export const statusPageCsp = (): string =>
  [
    "default-src 'none'",
    `style-src ${cspHash(STYLE)}`,
    `script-src ${cspHash(script())}`,
    "connect-src 'self'",
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

/** Short tag of a section's HTML, so the page replaces only the sections that changed. */
export function sectionHash(html: string): string {
  return createHash('sha1').update(html, 'utf8').digest('base64').slice(0, 12);
}

const TITLES: Record<StatusDocument['state'], string> = {
  operational: 'Operational',
  degraded: 'Degraded',
  down: 'Down',
  unknown: 'Starting',
};

export function renderPage(doc: StatusDocument, sections: Record<SectionId, string>): string {
  const section = (id: SectionId) =>
    `<section id="${id}" data-html="${sectionHash(sections[id])}">${sections[id]}</section>`;
  const body =
    `${section('overall')}\n${section('feeds')}\n<h2>Alert ingestion and public API</h2>\n` +
    `<div class="pair">${section('alerts')}\n${section('api')}</div>\n` +
    // a deploy of several nodes: the one that answered, and on the ingest node the edges
    `${doc.node ? `${section('nodes')}\n` : ''}${section('history')}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${TITLES[doc.state]} · Transit API status</title><link rel="icon" href="data:,"><style>${STYLE}</style></head>
<body data-generated="${esc(doc.generated_at)}" data-state="${doc.state}"><main>
<div class="top"><h1>Transit API status</h1><span id="live">Connecting…</span></div>
${body}
<footer>Machine-readable: <a href="status.json">status.json</a> ·
live stream: <a href="status/stream">status/stream</a> (server-sent events) ·
<a href="docs">API documentation</a></footer>
</main><script>${script()}</script></body></html>`;
}
