// The catalog core/served-ids.ts computes served ids from: which imported schedule lists which
// route, stop and trip id, each schedule's prefix, each feed's schedule. Read again when a
// schedule version or the config changes (IdScopes.reload), never per request.
import { feedScheduleId, type Config } from '../core/config.ts';
import { componentLogger, type Logger } from '../core/logger.ts';
import { formatIdChanges, idChanges, type IdChange } from '../core/served-id-changes.ts';
import { CATALOG_KINDS, ServedIds, type CatalogKind, type IdCatalog } from '../core/served-ids.ts';
import type { Db } from './db.ts';

type IdConfig = Pick<Readonly<Config>, 'schedules' | 'feeds'>;

const TABLES: Record<CatalogKind, { table: string; column: string }> = {
  route: { table: 'gtfs_routes', column: 'route_id' },
  stop: { table: 'gtfs_stops', column: 'stop_id' },
  trip: { table: 'gtfs_trips', column: 'trip_id' },
};

/** Feed id → the schedule its ids belong to (feedScheduleId), for rows that do not carry one. */
export function feedSchedules(config: IdConfig): Map<string, string | null> {
  return new Map(config.feeds.map((f) => [f.id, feedScheduleId(config, f)]));
}

/** Each imported or configured schedule with its prefix, and the fingerprint of what the catalog reads. */
async function scheduleVersions(db: Db, config: IdConfig): Promise<{ prefixes: Map<string, string>; key: string }> {
  const rows = await db.all<{ schedule_id: string; version: number | null; imported_at: Date }>(
    `SELECT s.schedule_id, (SELECT max(v.version_id) FROM schedule_versions v WHERE v.schedule_id = s.schedule_id)
      AS version,
       s.imported_at
     FROM schedules s ORDER BY s.schedule_id`,
  );
  const configured = new Map(config.schedules.map((s) => [s.id, s.id_prefix ?? s.id]));
  const prefixes = new Map<string, string>();
  for (const r of rows) prefixes.set(r.schedule_id, configured.get(r.schedule_id) ?? r.schedule_id);
  for (const [id, prefix] of configured) if (!prefixes.has(id)) prefixes.set(id, prefix);
  const key = JSON.stringify([
    rows.map((r) => [r.schedule_id, r.version, r.imported_at?.valueOf() ?? null]),
    [...prefixes],
    [...feedSchedules(config)],
  ]);
  return { prefixes, key };
}

/** Which schedules list each id of a kind; read only with two or more schedules imported. */
async function owners(db: Db, kind: CatalogKind): Promise<Map<string, readonly string[]>> {
  const { table, column } = TABLES[kind];
  // most ids have one schedule: one shared array per schedule, no array per id
  const single = new Map<string, readonly string[]>();
  return db.exclusive(async (c) => {
    const reader = await c.runAndReadAll(
      `SELECT ${column} AS id, min(schedule_id) AS one,
         CASE WHEN count(DISTINCT schedule_id) > 1 THEN list(DISTINCT schedule_id ORDER BY schedule_id) END AS many
       FROM ${table} GROUP BY ${column}`,
    );
    const [ids, ones, manys] = reader.getColumnsJS() as [string[], string[], (string[] | null)[]];
    const out = new Map<string, readonly string[]>();
    for (let i = 0; i < ids.length; i++) {
      const many = manys[i];
      if (many) out.set(ids[i]!, many);
      else {
        const one = ones[i]!;
        const list = single.get(one) ?? [one];
        single.set(one, list);
        out.set(ids[i]!, list);
      }
    }
    return out;
  });
}

export async function readIdCatalog(db: Db, config: IdConfig): Promise<IdCatalog> {
  const { prefixes, key } = await scheduleVersions(db, config);
  const empty = { route: new Map(), stop: new Map(), trip: new Map() };
  const [imported] = await db.all<{ n: number }>('SELECT CAST(count(*) AS INTEGER) AS n FROM schedules');
  // with one schedule nothing can collide: its ids are served as stored and need not be held
  if ((imported?.n ?? 0) < 2) return { prefixes, owners: empty, fingerprint: key };
  const read: Record<CatalogKind, Map<string, readonly string[]>> = empty;
  for (const kind of CATALOG_KINDS) read[kind] = await owners(db, kind);
  return { prefixes, owners: read, fingerprint: key };
}

/** The served ids of this database's schedules and this config's feeds. */
export async function readServedIds(db: Db, config: IdConfig): Promise<ServedIds> {
  return ServedIds.build(await readIdCatalog(db, config), feedSchedules(config));
}

/**
 * The mapping in force, shared by the pipeline (events), the API and the jobs: replaced whole
 * when schedules or feeds change, and every change of a served id is logged.
 */
export class IdScopes {
  private served: ServedIds = ServedIds.NONE;
  private reloading: Promise<IdChange[]> | null = null;
  private again = false;
  private readonly log: Logger;

  constructor(
    private readonly db: Db,
    private readonly config: () => IdConfig,
    log?: Logger,
  ) {
    this.log = componentLogger(log, 'ids');
  }

  static async open(db: Db, config: () => IdConfig, log?: Logger): Promise<IdScopes> {
    const scopes = new IdScopes(db, config, log);
    await scopes.reload();
    return scopes;
  }

  get current(): ServedIds {
    return this.served;
  }

  /** Reads the catalog again when a schedule or a feed changed; resolves with the ids served otherwise now. */
  reload(): Promise<IdChange[]> {
    if (this.reloading) {
      this.again = true;
      return this.reloading;
    }
    this.reloading = (async () => {
      const changes: IdChange[] = [];
      do {
        this.again = false;
        changes.push(...(await this.readOnce()));
      } while (this.again);
      return changes;
    })().finally(() => {
      this.reloading = null;
    });
    return this.reloading;
  }

  private async readOnce(): Promise<IdChange[]> {
    const config = this.config();
    const { key } = await scheduleVersions(this.db, config);
    if (key === this.served.fingerprint) return [];
    const next = await readServedIds(this.db, config);
    const before = this.served;
    this.served = next;
    // the first read says which ids are served prefixed; later ones what changed
    const changes = idChanges(before, next);
    if (changes.length) {
      // at start it states what is served; later a client's ids change, which must not pass unseen
      const first = before === ServedIds.NONE;
      this.log[first ? 'info' : 'warn'](
        { changes },
        `${first ? 'schedules share ids: served prefixed' : 'served ids changed'} (docs/guides/api.md, Ids across ` +
          `agencies):\n  ${formatIdChanges(changes).join('\n  ')}`,
      );
    }
    return changes;
  }
}
