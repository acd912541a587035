import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { parseConfig, type Config } from '../core/config.ts';
import { demoConfig } from '../fixtures/demo-config.ts';
import { demoNetworkDir, generateDemoNetwork, loadDemoNetwork } from '../fixtures/demo-network.ts';
import { startSimulator, type Simulator } from '../fixtures/simulator.ts';
import { createKey } from '../accounts/keys.ts';
import { PLANS } from '../accounts/plans.ts';
import type { Db } from '../store/db.ts';

// The embedded default: a generated city replayed through the real pipeline. The network is
// generated once per seed into the temp folder; the simulator serves it on loopback.

export interface Demo {
  config: Readonly<Config>;
  simulator: Simulator;
  /** the demo's config with `overrides` (a config file's content) merged over it; reload reads it again */
  configWith(overrides: Record<string, unknown>): Readonly<Config>;
}

/**
 * The simulator and the demo's config: loopback only (the demo prints live keys), its own
 * database with its exports and snapshot beside it (demoFiles), and `overrides` (a config file
 * given beside --demo, then flags) merged on top.
 */
export async function startDemo(env: NodeJS.ProcessEnv, overrides: Record<string, unknown> = {}): Promise<Demo> {
  const dir = demoNetworkDir(env.TRANSIT_DEMO_DIR ?? join(tmpdir(), 'transit-api-demo'));
  const network = existsSync(join(dir, 'gtfs.zip')) ? await loadDemoNetwork(dir) : generateDemoNetwork(dir);
  const simulator = await startSimulator({ network, host: '127.0.0.1', port: 0 });
  const configWith = (more: Record<string, unknown>) => {
    const raw = (extra: Record<string, unknown>) =>
      demoConfig(simulator, { db_path: 'data/demo.duckdb', port: 8080, host: '127.0.0.1', ...extra });
    // the database path as the environment leaves it (TRANSIT_DB), then the files beside it
    const { db_path } = parseConfig(raw(more), env);
    return parseConfig(raw(withOwnFiles(more, demoFiles(db_path, dir))), env);
  };
  try {
    return { config: configWith(overrides), simulator, configWith };
  } catch (err) {
    await simulator.stop();
    throw err;
  }
}

/**
 * Where the demo keeps its export files and analyst snapshot: beside its own database
 * (`data/demo/exports`, `data/demo/snapshot.duckdb` for `data/demo.duckdb`). The defaults,
 * `data/exports` and `data/snapshot.duckdb`, are a configured deployment's in the same checkout:
 * shared, each one's daily job rewrote the other's files.
 */
export function demoFiles(dbPath: string, demoDir: string): { exports_dir: string; snapshot_path: string } {
  const base =
    dbPath === ':memory:' ? join(demoDir, 'files') : join(dirname(dbPath), basename(dbPath, extname(dbPath)));
  return { exports_dir: join(base, 'exports'), snapshot_path: join(base, 'snapshot.duckdb') };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The demo's own files under what a config file says: its exports.dir or snapshot.path win. */
function withOwnFiles(
  more: Record<string, unknown>,
  files: { exports_dir: string; snapshot_path: string },
): Record<string, unknown> {
  const out = { ...more };
  // a value that is not an object is left for the config check to refuse
  if (more.exports === undefined || isObject(more.exports)) out.exports = { dir: files.exports_dir, ...more.exports };
  if (more.snapshot === undefined || isObject(more.snapshot))
    out.snapshot = { path: files.snapshot_path, ...more.snapshot };
  return out;
}

/** Fresh keys for every plan, live and test; earlier demo keys are revoked so only these work. */
export async function createDemoKeys(db: Db): Promise<Array<{ plan: string; test: boolean; key: string }>> {
  await db.run(`UPDATE api_keys SET revoked_at = now() WHERE name LIKE 'demo:%' AND revoked_at IS NULL`);
  const keys: Array<{ plan: string; test: boolean; key: string }> = [];
  for (const plan of PLANS) {
    for (const test of [false, true]) {
      const created = await createKey(db, { plan, test, name: `demo:${plan}${test ? ':test' : ''}` });
      keys.push({ plan, test, key: created.key });
    }
  }
  return keys;
}
