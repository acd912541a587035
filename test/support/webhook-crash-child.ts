// Runs the webhook worker alone against a DuckDB file, for the crash test: the parent kills
// this process with SIGKILL mid-delivery, then starts it again. SIGTERM stops it cleanly.
import { Db } from '../../store/db.ts';
import { InMemoryEventBus } from '../../core/events.ts';
import { createWebhooks } from '../../webhooks/index.ts';
import { webhookConfig } from './webhooks.ts';

const [dbPath] = process.argv.slice(2);
if (!dbPath) {
  console.error('usage: webhook-crash-child.ts <db-path>');
  process.exit(2);
}
const db = await Db.open(dbPath);
const webhooks = createWebhooks({
  db,
  bus: new InMemoryEventBus(),
  config: webhookConfig({ max_concurrency: 4, max_concurrency_per_endpoint: 2 }),
  targetPolicy: { allow: new Set(['loopback']) },
  stopGraceMs: 100,
});
await webhooks.start();
process.stdout.write(`started recovered=${webhooks.stats.recovered_at_start}\n`);
process.on('SIGTERM', () => {
  void (async () => {
    await webhooks.stop();
    await db.close();
    process.exit(0);
  })();
});
// the worker's timers are unref'd; this keeps the process alive until told to stop
setInterval(() => undefined, 1 << 30);
