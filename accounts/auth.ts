// Key authentication with an in-memory cache, so the hot path never waits on DuckDB, while a
// background recheck makes revocations (by this process, the CLI or SQL) take effect in seconds.
import { componentLogger, type Logger } from '../core/logger.ts';
import { DAY_MS } from '../core/dates.ts';
import type { Db } from '../store/db.ts';
import { keyPartition, keyPartitionFingerprints } from './store.ts';
import { findKeysByHashes, hashKey, KEY_PATTERN, keyStates, recentlyUsedKeys, type ApiKeyRecord } from './keys.ts';
import type { Plan } from './plans.ts';

export interface AuthenticatedKey {
  readonly id: string;
  readonly plan: Plan;
  readonly test: boolean;
  readonly prefix: string;
}

export interface KeyAuthenticator {
  /** null for a malformed, unknown or revoked key */
  authenticate(token: string, nowMs: number): AuthenticatedKey | null | Promise<AuthenticatedKey | null>;
  /** stops background work; resolves when none is in flight */
  close(): void | Promise<void>;
  /** forgets a revoked key at once (a revocation through the admin channel or the broker) and tells onRevoked */
  invalidate?(keyId: string): void;
  /** Re-reads the state of every cached key now (notices may have been missed). */
  recheck?(): Promise<void>;
  /**
   * Called with each key found revoked: told by invalidate(), or seen by a recheck (a revocation
   * by SQL). Its streams and webhooks end there. Returns the unsubscribe.
   */
  onRevoked?(listener: (keyId: string) => void): () => void;
}

/** A first use of a key waiting for its batch. */
interface Waiter {
  nowMs: number;
  resolve: (key: AuthenticatedKey | null) => void;
  reject: (err: unknown) => void;
}

interface CacheEntry {
  /** null once revoked: kept so repeated use of a revoked key costs no query */
  key: AuthenticatedKey | null;
  validatedAtMs: number;
  /** the latest recheck round whose fingerprint was surely taken before this state was read (runRecheck) */
  readAfterRound: number;
  /** the partition of the key table its key falls in (keyPartition) */
  part: string;
}

export interface KeyStoreOptions {
  /** interval of the background recheck of cached keys */
  recheckMs: number;
  clock: () => number;
  /** unknown hashes are remembered this long, so floods of bad keys do not reach the database */
  negativeTtlMs?: number;
  maxNegativeEntries?: number;
  /** keys remembered by their token, so a known token is not hashed again (default 10,000) */
  maxTokenEntries?: number;
  /** keys used in the last day that start() loads in one query (default 10,000; 0: none) */
  warmKeys?: number;
  log?: Logger;
}

function toKey(record: ApiKeyRecord): AuthenticatedKey | null {
  if (record.revoked_at) return null;
  return Object.freeze({ id: record.id, plan: record.plan, test: record.test, prefix: record.prefix });
}

export class KeyStore implements KeyAuthenticator {
  private readonly entries = new Map<string, CacheEntry>();
  /**
   * The same entries by token: SHA-256 of the token was the largest single cost of a cached
   * request. An entry here is the object `entries` holds, so a recheck's verdict (revoked, new
   * plan) shows through at once; invalidate() removes it here too; an entry replaced after
   * going stale is found again by its hash and remembered anew. Bounded, oldest first out.
   */
  private readonly byToken = new Map<string, CacheEntry>();
  private readonly unknown = new Map<string, number>();
  private readonly lookups = new Map<string, Promise<AuthenticatedKey | null>>();
  private timer: NodeJS.Timeout | null = null;
  private rechecking: Promise<void> | null = null;
  private warming: Promise<number> | null = null;
  /** first uses asked for while a batch is read: the next batch, one query (runBatches) */
  private nextBatch: Map<string, Waiter> | null = null;
  private batches: Promise<void> | null = null;
  private readonly negativeTtlMs: number;
  private readonly maxNegative: number;
  private readonly maxTokens: number;
  /** cached answers older than this are not trusted even if the recheck fell behind */
  private readonly maxStaleMs: number;
  private readonly log: Logger;
  private readonly revokedListeners = new Set<(keyId: string) => void>();
  /** incremented as each recheck starts: a read started after that sees the table as of then or later */
  private round = 0;
  /** per partition of the key table, its fingerprint when its keys were last read back, and that round */
  private readonly lastRead = new Map<string, { fingerprint: string; round: number }>();

  constructor(
    private readonly db: Db,
    private readonly options: KeyStoreOptions,
  ) {
    this.negativeTtlMs = options.negativeTtlMs ?? 2_000;
    this.maxNegative = options.maxNegativeEntries ?? 10_000;
    this.maxTokens = Math.max(1, options.maxTokenEntries ?? 10_000);
    this.maxStaleMs = options.recheckMs * 3;
    this.log = componentLogger(options.log, 'auth');
  }

  /**
   * Starts the background recheck (unref'd: it never keeps the process alive) and loads the keys
   * used in the last day, so that after a restart the clients' first requests do not each wait on
   * a lookup of their own: with 1,200 keys those lookups queued behind one another for over a
   * second (`bench:http`, p99 133 ms in the first seconds).
   */
  start(): this {
    if (!this.timer) {
      this.timer = setInterval(() => void this.recheck(), this.options.recheckMs);
      this.timer.unref();
      this.warming = this.warm().catch((err: unknown) => {
        this.log.error({ err }, 'loading the recently used api keys failed; they are looked up as they come');
        return 0;
      });
    }
    return this;
  }

  /** Caches the unrevoked keys used since a day ago in one query; returns how many it added. */
  async warm(limit = this.options.warmKeys ?? 10_000): Promise<number> {
    if (limit <= 0) return 0;
    // read after the last finished recheck's fingerprints, as a lookup would be (runRecheck)
    const readAfterRound = this.round - 1;
    const now = this.options.clock();
    const records = await recentlyUsedKeys(this.db, now - DAY_MS, limit);
    let added = 0;
    for (const record of records) {
      if (this.entries.has(record.key_hash)) continue;
      this.cache(record, now, readAfterRound);
      added++;
    }
    return added;
  }

  authenticate(token: string, nowMs: number): AuthenticatedKey | null | Promise<AuthenticatedKey | null> {
    // A token is looked up as it came only among tokens this process has already matched to a
    // stored hash; the seeded string hash of a Map probe tells an attacker no more than the
    // SHA-256 probe below does (see there). The tokens kept are those requests carry anyway.
    const known = this.byToken.get(token);
    if (known !== undefined && nowMs - known.validatedAtMs <= this.maxStaleMs) return known.key;
    if (!KEY_PATTERN.test(token)) return null;
    const hash = hashKey(token);
    // No constant-time compare here, on purpose: the token is looked up by its SHA-256, so what an
    // attacker can time is a map (or index) probe on a hash of their own guess, which reveals
    // nothing about any stored key's bytes. Comparing the found entry with the same hash would
    // only ever compare a value with itself.
    const entry = this.entries.get(hash);
    if (entry && nowMs - entry.validatedAtMs <= this.maxStaleMs) {
      this.remember(token, entry);
      return entry.key;
    }
    const unknownUntil = this.unknown.get(hash);
    if (unknownUntil !== undefined && unknownUntil > nowMs) return null;
    return this.lookup(hash, nowMs);
  }

  private remember(token: string, entry: CacheEntry): void {
    if (this.byToken.size >= this.maxTokens && !this.byToken.has(token)) {
      this.byToken.delete(this.byToken.keys().next().value as string);
    }
    this.byToken.set(token, entry);
  }

  /** Forgets a revoked key at once (after a revoke in this process or a broker notice) and tells the listeners. */
  invalidate(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.key?.id === keyId) this.entries.delete(hash);
    for (const [token, entry] of this.byToken) if (entry.key?.id === keyId) this.byToken.delete(token);
    this.revoked(keyId);
  }

  onRevoked(listener: (keyId: string) => void): () => void {
    this.revokedListeners.add(listener);
    return () => this.revokedListeners.delete(listener);
  }

  /** Re-reads every cached key's state in one query. */
  recheck(): Promise<void> {
    this.rechecking ??= this.runRecheck().finally(() => {
      this.rechecking = null;
    });
    return this.rechecking;
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.rechecking;
    await this.warming;
    await Promise.all([...this.lookups.values()].map((p) => p.catch(() => null)));
    await this.batches;
  }

  /**
   * Reading every cached key back cost ~25 µs of main-thread time per key (30 ms every interval
   * with 1,200 keys: a stall every request behind it waited out), so the key table's fingerprints
   * are asked first, one per sixteenth of the keys (accounts/store.ts). A partition whose
   * fingerprint has not moved since its keys were last read vouches for every entry of it whose
   * state was read after that fingerprint was taken (rechecks run one at a time, so a lookup begun
   * during a later round qualifies). What is read back: the entries of partitions that changed (a
   * key created, revoked by SQL, moved to another plan), and entries read before their partition's
   * fingerprint (a lookup that raced a recheck).
   */
  private async runRecheck(): Promise<void> {
    const started = this.options.clock();
    const round = ++this.round;
    // only the entries asked about: keys cached while the query ran were just read fresh
    const asked = [...this.entries.values()].filter((e) => e.key !== null);
    if (asked.length === 0) return;
    try {
      const fingerprints = await keyPartitionFingerprints(this.db);
      const fingerprintOf = (part: string): string => fingerprints.get(part) ?? 'none';
      const moved = new Set<string>();
      for (const entry of asked) {
        if (this.lastRead.get(entry.part)?.fingerprint !== fingerprintOf(entry.part)) moved.add(entry.part);
      }
      // a partition that moved is read back whole below, so its new fingerprint stands from this round
      for (const part of moved) this.lastRead.set(part, { fingerprint: fingerprintOf(part), round });
      const toRead: CacheEntry[] = [];
      for (const entry of asked) {
        if (entry.readAfterRound >= this.lastRead.get(entry.part)!.round && !moved.has(entry.part)) {
          entry.validatedAtMs = started;
        } else {
          toRead.push(entry);
        }
      }
      if (toRead.length > 0) await this.readBack(toRead, started, round);
    } catch (err) {
      // the entries age past maxStaleMs and the hot path falls back to direct lookups
      this.log.error({ err }, 'api key recheck failed');
    }
  }

  /** The stored state of these entries' keys, applied; revocations found are told. */
  private async readBack(entries: CacheEntry[], started: number, round: number): Promise<void> {
    const states = await keyStates(
      this.db,
      entries.map((e) => e.key!.id),
    );
    const revoked = new Set<string>();
    for (const entry of entries) {
      if (!entry.key) continue;
      const state = states.get(entry.key.id);
      const next = state ? toKey(state) : null;
      // revoked (or deleted) since it was cached: by SQL, or a notice this node missed
      if (next === null) revoked.add(entry.key.id);
      entry.key = next;
      entry.validatedAtMs = started;
      entry.readAfterRound = round;
    }
    for (const keyId of revoked) this.revoked(keyId);
  }

  /** A key read from the store, cached under its hash. */
  private cache(record: ApiKeyRecord, nowMs: number, readAfterRound: number): AuthenticatedKey | null {
    const key = toKey(record);
    this.entries.set(record.key_hash, { key, validatedAtMs: nowMs, readAfterRound, part: keyPartition(record.id) });
    return key;
  }

  private revoked(keyId: string): void {
    for (const listener of this.revokedListeners) {
      try {
        listener(keyId);
      } catch (err) {
        this.log.error({ err, key_id: keyId }, 'a revocation listener failed');
      }
    }
  }

  private lookup(hash: string, nowMs: number): Promise<AuthenticatedKey | null> {
    let pending = this.lookups.get(hash);
    if (!pending) {
      pending = new Promise<AuthenticatedKey | null>((resolve, reject) => {
        this.nextBatch ??= new Map();
        this.nextBatch.set(hash, { nowMs, resolve, reject });
      }).finally(() => this.lookups.delete(hash));
      this.lookups.set(hash, pending);
      this.batches ??= this.runBatches();
    }
    return pending;
  }

  /**
   * First uses of keys are read in batches: one query for every key asked for while the one
   * before ran. After a restart each client's first request waited on a query of its own, one
   * after another through the store's queue: with 1,200 keys the last answered after 8–11 s.
   */
  private async runBatches(): Promise<void> {
    try {
      // the first uses of this turn join the first batch; keys the warm start loads need no query
      await new Promise((resolve) => setImmediate(resolve));
      await this.warming;
      while (this.nextBatch) {
        const batch = this.nextBatch;
        this.nextBatch = null;
        const toRead: string[] = [];
        for (const [hash, waiter] of batch) {
          const entry = this.entries.get(hash);
          // a stale entry is why it was asked: read it again
          if (entry && waiter.nowMs - entry.validatedAtMs <= this.maxStaleMs) waiter.resolve(entry.key);
          else toRead.push(hash);
        }
        if (toRead.length > 0) await this.readBatch(toRead, batch);
      }
    } finally {
      this.batches = null;
    }
  }

  private async readBatch(hashes: string[], waiters: Map<string, Waiter>): Promise<void> {
    // a recheck running now may take its fingerprint after this read: only the one before it surely preceded it
    const readAfterRound = this.round - 1;
    let records: Map<string, ApiKeyRecord>;
    try {
      records = await findKeysByHashes(this.db, hashes);
    } catch (err) {
      for (const hash of hashes) waiters.get(hash)!.reject(err);
      return;
    }
    for (const hash of hashes) {
      const waiter = waiters.get(hash)!;
      const record = records.get(hash);
      if (!record) {
        if (this.unknown.size >= this.maxNegative) this.unknown.clear();
        this.unknown.set(hash, waiter.nowMs + this.negativeTtlMs);
        waiter.resolve(null);
        continue;
      }
      waiter.resolve(this.cache(record, waiter.nowMs, readAfterRound));
    }
  }
}
