// The status feature for the composition root: the collector, its store, the request recorder
// teed into the API's meter, the page, and the `status` topic of the stream hub its viewers
// read. statusRoutes (status/routes.ts) serves what this holds; nothing it serves waits for DuckDB.
import type { Config } from '../core/config.ts';
import type { EventBus } from '../core/events.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import type { LiveView } from '../core/ports.ts';
import type { Db } from '../store/db.ts';
import type { ScheduleHealth } from '../store/schedule-refresh.ts';
import type { Meter, UsageRecord } from '../accounts/meter.ts';
import type { StreamHub, StreamPlan } from '../stream/hub.ts';
import { StatusCollector } from './collector.ts';
import { renderPage, sectionHash } from './page.ts';
import { renderSections, SECTION_IDS } from './render.ts';
import { RequestStats } from './request-stats.ts';
import type { StatusDocument } from './schema.ts';
import { StatusStore } from './status-store.ts';

export { statusPageCsp } from './page.ts';
export type { StatusDocument } from './schema.ts';

/** What the routes need: the document, the page, and a way in for stream viewers. */
export interface StatusPages {
  document(): StatusDocument;
  /** changes whenever the document is rebuilt (cache key of /status.json) */
  readonly version: number;
  page(): string;
  /** false when the viewer limit is reached */
  canView(): boolean;
  /** one more viewer of the hub's status topic; it gets the current sections at once */
  openViewer(): StreamPlan;
}

export interface StatusService extends StatusPages {
  /** Tees the API's meter: records go on to `inner`, and their figures into the status page. */
  wrapMeter(inner: Meter): Meter;
  /** open API streams as the socket layer counts them (status viewers are subtracted) */
  setOpenStreams(count: () => number): void;
  /** the schedule refresh job's in-memory health (versions, last source checks) */
  setSchedules(health: () => readonly ScheduleHealth[]): void;
  start(): Promise<void>;
  /** ends viewer streams, stores pending state changes, closes the status connection */
  stop(): Promise<void>;
  readonly collector: StatusCollector;
  readonly viewerCount: number;
}

export interface StatusDeps {
  /** null: memory only (no incident persistence, no outbox figures) */
  db: Db | null;
  live: LiveView;
  config: Readonly<Config>;
  bus?: EventBus;
  /** the process's one fan-out hub: viewers read its `status` topic */
  hub: StreamHub;
  clock?: () => number;
  log?: Logger;
}

/** The hub topic of /status/stream. */
export const STATUS_TOPIC = 'status';

/** Public pages are not usage: the pipeline records a stream opening even on a public route. */
export const STATUS_PATHS: ReadonlySet<string> = new Set(['/status', '/status.json', '/status/stream']);

export async function createStatus(deps: StatusDeps): Promise<StatusService> {
  const clock = deps.clock ?? Date.now;
  const log = componentLogger(deps.log, 'status');
  let store: StatusStore | null = null;
  if (deps.db) {
    try {
      store = await StatusStore.open(deps.db);
    } catch (err) {
      log.error({ err }, 'could not open a store connection; history will not be kept');
    }
  }
  const requests = new RequestStats(clock(), clock);
  const collector = new StatusCollector({
    live: deps.live,
    config: deps.config,
    requests,
    store,
    bus: deps.bus,
    clock,
    log,
  });
  const viewers = deps.hub.broadcast(STATUS_TOPIC, 'status');
  let pageCache: { version: number; html: string } | null = null;

  const message = (doc: StatusDocument): string => {
    const all = renderSections(doc, Date.parse(doc.generated_at));
    // one process has no node section: its page and stream stay as they were
    const ids = doc.node ? SECTION_IDS : SECTION_IDS.filter((id) => id !== 'nodes');
    const sections = Object.fromEntries(ids.map((id) => [id, all[id]]));
    const hashes = Object.fromEntries(ids.map((id) => [id, sectionHash(all[id])]));
    return JSON.stringify({ generated_at: doc.generated_at, state: doc.state, sections, hashes });
  };
  // rendered once per update (only while someone watches) and written to every viewer
  collector.onUpdate(({ doc }) => viewers.publish(() => message(doc)));

  return {
    collector,
    get version() {
      return collector.version;
    },
    get viewerCount() {
      return viewers.subscriberCount;
    },
    document: () => collector.document(),
    page() {
      const doc = collector.document();
      if (pageCache?.version !== collector.version) {
        pageCache = {
          version: collector.version,
          html: renderPage(doc, renderSections(doc, Date.parse(doc.generated_at))),
        };
      }
      return pageCache.html;
    },
    canView: () => viewers.subscriberCount < deps.config.status.max_viewers,
    openViewer: () => deps.hub.openBroadcast(STATUS_TOPIC, () => message(collector.document())),
    wrapMeter(inner) {
      return {
        record(usage: UsageRecord) {
          requests.record(usage);
          if (usage.keyId === null && STATUS_PATHS.has(usage.endpoint)) return;
          inner.record(usage);
        },
        flush: () => inner.flush(),
        close: () => inner.close(),
      };
    },
    setOpenStreams(count) {
      collector.setOpenStreams(() => count() - viewers.subscriberCount);
    },
    setSchedules: (health) => collector.setSchedules(health),
    start: () => collector.start(),
    async stop() {
      viewers.closeAll('shutdown');
      await collector.stop();
      await store?.close();
    },
  };
}
