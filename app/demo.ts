import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig, type Config } from '../core/config.ts';
import { demoConfig } from '../fixtures/demo-config.ts';
import { generateDemoNetwork, loadDemoNetwork } from '../fixtures/demo-network.ts';
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
 * database, and `overrides` (a config file given beside --demo, then flags) merged on top.
 */
export async function startDemo(env: NodeJS.ProcessEnv, overrides: Record<string, unknown> = {}): Promise<Demo> {
  const dir = join(env.TRANSIT_DEMO_DIR ?? join(tmpdir(), 'transit-api-demo'), 'seed-1');
  const network = existsSync(join(dir, 'gtfs.zip')) ? await loadDemoNetwork(dir) : generateDemoNetwork(dir);
  const simulator = await startSimulator({ network, host: '127.0.0.1', port: 0 });
  const configWith = (more: Record<string, unknown>) =>
    parseConfig(demoConfig(simulator, { db_path: 'data/demo.duckdb', port: 8080, host: '127.0.0.1', ...more }), env);
  try {
    return { config: configWith(overrides), simulator, configWith };
  } catch (err) {
    await simulator.stop();
    throw err;
  }
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
