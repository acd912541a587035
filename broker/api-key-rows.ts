// API keys for edges, which hold no copy of the ingest node's database: the ingest node writes
// its api_keys rows (hashes only, never a key) to the broker when they change, and each edge
// replaces the rows of its private in-memory database with them, where its key cache reads them
// as in one process. A revocation is published after the rows, and an edge reads the rows before
// it drops the key from its cache, so the next request is refused on every node.
import type { Db } from '../store/db.ts';
import { within, type Broker } from './redis.ts';

interface KeyRow {
  id: string;
  key_hash: string;
  prefix: string;
  plan: string;
  test: boolean;
  name: string | null;
  created_at: string;
  revoked_at: string | null;
}

export function keyKeys(broker: Broker): { rows: string; channel: string } {
  return { rows: broker.key('api-keys'), channel: broker.key('api-keys:changed') };
}

async function readRows(db: Db): Promise<string> {
  const rows = await db.all<{
    id: string;
    key_hash: string;
    prefix: string;
    plan: string;
    test: boolean;
    name: string | null;
    created: string;
    revoked: string | null;
  }>(
    `SELECT id, key_hash, prefix, plan, test, name, strftime(created_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS created,
            strftime(revoked_at, '%Y-%m-%dT%H:%M:%S.%gZ') AS revoked
     FROM api_keys ORDER BY id`,
  );
  return JSON.stringify(
    rows.map(
      (r): KeyRow => ({
        id: r.id,
        key_hash: r.key_hash,
        prefix: r.prefix,
        plan: r.plan,
        test: r.test,
        name: r.name,
        created_at: r.created,
        revoked_at: r.revoked,
      }),
    ),
  );
}

/** The ingest node's side: checks the table on a timer (keys changed by SQL too) and on demand. */
export class KeyPublisher {
  private last: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly broker: Broker,
    private readonly db: Db,
    private readonly options: { intervalMs?: number } = {},
  ) {}

  start(): this {
    this.timer ??= setInterval(() => void this.sync(), this.options.intervalMs ?? 2000);
    this.timer.unref();
    return this;
  }

  /** Publishes the rows when they changed; resolves once the broker has them. */
  sync(): Promise<void> {
    this.running = this.running.then(async () => {
      try {
        const text = await readRows(this.db);
        if (text === this.last && this.broker.state === 'up') return;
        const { rows, channel } = keyKeys(this.broker);
        await this.broker.redis.multi().set(rows, text).publish(channel, '1').exec();
        this.last = text;
      } catch (err) {
        this.broker.log.warn({ err }, 'publishing api keys to the broker failed');
      }
    });
    return this.running;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await within(this.running);
  }
}

/** An edge's copy of the rows, in its own database. */
export class KeyReplica {
  private last: string | null = null;
  private running: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly broker: Broker,
    private readonly db: Db,
    private readonly options: { intervalMs?: number } = {},
  ) {}

  async start(): Promise<this> {
    const sub = this.broker.connection('api-keys');
    const { channel } = keyKeys(this.broker);
    sub.on('message', () => void this.sync());
    sub.on('ready', () => void this.sync());
    await sub.subscribe(channel);
    this.timer = setInterval(() => void this.sync(), this.options.intervalMs ?? 5000);
    this.timer.unref();
    await this.sync();
    return this;
  }

  /** Reads the rows from the broker and replaces the local ones when they changed. */
  sync(): Promise<void> {
    this.running = this.running.then(async () => {
      try {
        const text = await this.broker.redis.get(keyKeys(this.broker).rows);
        if (text === null || text === this.last) return;
        const rows = JSON.parse(text) as KeyRow[];
        await this.db.transaction(async (c) => {
          await c.run('DELETE FROM api_keys');
          for (const r of rows) {
            await c.run(
              'INSERT INTO api_keys (id, key_hash, prefix, plan, test, name, created_at, revoked_at) VALUES ($1, $2, ' +
                '$3, $4, $5, $6, $7::TIMESTAMPTZ, $8::TIMESTAMPTZ)',
              [r.id, r.key_hash, r.prefix, r.plan, r.test, r.name, r.created_at, r.revoked_at],
            );
          }
        });
        this.last = text;
      } catch (err) {
        this.broker.log.warn({ err }, 'reading api keys from the broker failed; the last copy stays');
      }
    });
    return this.running;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await within(this.running);
  }
}
