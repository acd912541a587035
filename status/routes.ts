// The public status page: HTML, JSON and the live stream the page listens to. No key, not
// metered; every answer comes from memory (status/), so it works while DuckDB is busy.
import { z } from 'zod';
import { ApiError } from '../core/errors.ts';
import { htmlPageHeaders, type HeaderList } from '../http/headers.ts';
import { defineRoute } from '../http/route.ts';
import { statusPageCsp, type StatusPages } from './index.ts';
import { StatusDocumentSchema } from './schema.ts';
import { Reply, StreamReply, type RouteDef } from '../http/types.ts';

const TAGS = ['Status'];

export function statusRoutes(status: StatusPages): RouteDef[] {
  let headers: HeaderList | null = null;
  return [
    defineRoute({
      id: 'getStatusPage',
      method: 'GET',
      path: '/status',
      summary: 'Status page (HTML)',
      description:
        'Live operational status of the realtime feeds, alert ingestion and the public API, with the incidents of ' +
        'the last 7 days. The page updates itself from `/status/stream`; it needs no key and loads ' +
        'nothing from elsewhere.',
      tags: TAGS,
      auth: 'none',
      meter: null,
      contentType: 'text/html; charset=utf-8',
      response: z.string().meta({ description: 'The HTML page.' }),
      handler: () => {
        headers ??= htmlPageHeaders(statusPageCsp());
        return new Reply(200, 'text/html; charset=utf-8', status.page(), [['Cache-Control', 'no-cache'], ...headers]);
      },
    }),
    defineRoute({
      id: 'getStatus',
      method: 'GET',
      path: '/status.json',
      summary: 'Operational status (JSON)',
      description:
        'The figures of the status page: per feed its state, last successful poll, header timestamp age, freshness, ' +
        'entities, error rate and the last hour minute by minute; alert ingestion; the public API (requests per ' +
        'minute, error rate, p50/p99 latency over 5 and 60 minutes, open streams, webhook outbox); and the incident ' +
        'history. Refreshed twice a second.\n\nA feed is `down` after two failed polls in a row, when no poll ' +
        'succeeded for two poll intervals, or when its data expired; `degraded` when its last poll failed or ' +
        'its data is stale.',
      tags: TAGS,
      auth: 'none',
      meter: null,
      response: StatusDocumentSchema,
      cache: { version: () => status.version },
      handler: () => status.document(),
    }),
    defineRoute({
      id: 'streamStatus',
      method: 'GET',
      path: '/status/stream',
      summary: 'Status updates (event stream)',
      description:
        'Server-sent events for the status page: a `status` event at once and after every change ' +
        "(`data`: `{generated_at, state, sections, hashes}`, the page's sections as HTML), a `: ping` comment every " +
        '15 s. Carries nothing but status; no key, not metered. Read `/status.json` for the figures as data.',
      tags: TAGS,
      auth: 'none',
      meter: null,
      stream: true,
      contentType: 'text/event-stream',
      errors: ['unavailable'],
      response: z.string().meta({ description: 'An event stream.' }),
      handler: () => {
        if (!status.canView())
          throw new ApiError('unavailable', 'Too many status page viewers right now; retry in a minute.', {
            headers: { 'Retry-After': '60' },
          });
        const plan = status.openViewer();
        return new StreamReply((sink) => {
          const subscription = plan.start(sink);
          sink.onClose(() => subscription.close('client'));
        });
      },
    }),
  ];
}
