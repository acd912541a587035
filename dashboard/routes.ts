// The developer dashboard: one public HTML page. It holds no data; its script signs in with a
// key pasted by the developer and reads the keyed JSON endpoints (account, usage, webhooks,
// exports, and route performance when asked for) from this origin, so the page itself needs no key and is never
// metered.
import { z } from 'zod';
import { dashboardHeaders, renderDashboardPage } from './page.ts';
import { defineRoute } from '../http/route.ts';
import { Reply, type RouteDef } from '../http/types.ts';

const HTML = 'text/html; charset=utf-8';

export function dashboardRoutes(): RouteDef[] {
  // the page is the same for everyone: rendered once, on first use (from the sources that bundles its script)
  let page: { html: string; headers: ReturnType<typeof dashboardHeaders> } | null = null;
  return [
    defineRoute({
      id: 'getDashboardPage',
      method: 'GET',
      path: '/dashboard',
      summary: 'Developer dashboard (HTML)',
      description:
        'A page where a developer signs in with an API key and sees the plan and its limits, the current rate-limit ' +
        'window, usage of the last 14 days as a chart (requests, connection-minutes), open event streams, webhook ' +
        'endpoints with their recent deliveries and, on the Max plan, the history export files with download ' +
        'buttons, filtered by dataset, format, state and service days, and, when asked for, the performance of one ' +
        'bus route, rail line or streetcar route as charts (on-time, early and late shares, headway adherence, ' +
        'prediction accuracy by horizon).\n\nThe page needs no key and is not metered. The key is kept in the ' +
        "browser tab (session storage) and sent only in the `Authorization` header of the page's calls to " +
        '`/api/v1/account`, `/api/v1/account/usage` (not metered), `/api/v1/webhooks/…` and ' +
        '`/api/v1/history/exports` (metered), and, only when the performance section is opened and Show pressed, the ' +
        'route directories and `…/performance` (metered). The page loads nothing from elsewhere; a strict ' +
        'Content-Security-Policy allows only its own script and style.',
      tags: ['Dashboard'],
      auth: 'none',
      meter: null,
      contentType: HTML,
      response: z.string().meta({ description: 'The HTML page.' }),
      handler: () => {
        page ??= { html: renderDashboardPage(), headers: dashboardHeaders() };
        return new Reply(200, HTML, page.html, page.headers);
      },
    }),
  ];
}
