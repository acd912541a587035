import t from 'tap';
import { classifyNode, edgeHealth, edgeWeight, EDGE_SILENT_MS, nodeStatus, type NodeFacts } from './node-status.ts';
import { EdgeHealthSchema, NodeStatusSchema } from './node-schema.ts';

const NOW = Date.parse('2026-11-27T12:00:00Z');

function edge(over: Partial<NodeFacts> = {}): NodeFacts {
  return {
    role: 'edge',
    nodeId: 'edge-1:8081',
    broker: { state: 'up', downSinceMs: null },
    live: { publishedMs: NOW - 400, snapshots: 1, changes: 12 },
    ingest: {
      url: 'http://10.0.0.2:8080',
      source: 'config',
      reachable: true,
      checkedMs: NOW - 1000,
      lastOkMs: NOW - 1000,
      error: null,
      forwarded: 3,
      failed: 0,
    },
    ...over,
  };
}

t.test('an edge with every link up is operational and says how old its state is', async (t) => {
  const v = classifyNode(edge(), NOW);
  t.equal(v.state, 'operational');
  t.equal(v.reason, 'Serving the live state of 0.4 s ago; the ingest node answers');
});

t.test('an edge alone: degraded, one reason per link, never an error of its own', async (t) => {
  const alone = edge({
    broker: { state: 'down', downSinceMs: NOW - 30_000 },
    live: { publishedMs: NOW - 38_000, snapshots: 1, changes: 12 },
    ingest: { ...edge().ingest!, reachable: false, error: 'ECONNREFUSED connecting to http://10.0.0.2:8080' },
  });
  const v = classifyNode(alone, NOW);
  t.equal(v.state, 'degraded');
  t.match(v.reason, /^The broker is unreachable since 11:59:30 UTC: serving the live state of 38 s ago/);
  t.match(v.reason, /The ingest node \(http:\/\/10\.0\.0\.2:8080\) is not answering: .*ECONNREFUSED/);
  const doc = nodeStatus(alone, NOW);
  t.ok(NodeStatusSchema.safeParse(doc).success, 'matches its schema');
  t.equal(doc.broker.down_since, '2026-11-27T11:59:30.000Z');
  t.equal(doc.live_state?.age_s, 38);
  t.equal(doc.ingest?.reachable, false);
});

t.test('the broker up but no beat from the ingest node: the copy is late', async (t) => {
  const v = classifyNode(edge({ live: { publishedMs: NOW - 12_000, snapshots: 2, changes: 0 } }), NOW);
  t.equal(v.state, 'degraded');
  t.match(v.reason, /No live state from the ingest node for 12 s/);
  t.equal(classifyNode(edge({ live: { publishedMs: null, snapshots: 0, changes: 0 } }), NOW).state, 'unknown');
});

t.test('the ingest node judges its broker link only', async (t) => {
  const ingest: NodeFacts = { role: 'ingest', nodeId: 'ingest:8080', broker: { state: 'up', downSinceMs: null } };
  t.same(classifyNode(ingest, NOW), { state: 'operational', reason: 'Connected to the broker' });
  const down = classifyNode({ ...ingest, broker: { state: 'down', downSinceMs: NOW - 5_000 } }, NOW);
  t.equal(down.state, 'degraded');
  t.match(down.reason, /edges serve their last live state/);
  const doc = nodeStatus(ingest, NOW);
  t.equal(doc.live_state, null);
  t.equal(doc.ingest, null);
});

t.test('edges from their heartbeats: a silent one is down, an unreadable one left out', async (t) => {
  const beat = (id: string, state: string) => ({
    n: 4,
    node_id: id,
    url: `http://127.0.0.1:${id}`,
    started_at: '2026-11-27T11:00:00.000Z',
    sent_at: '2026-11-27T11:59:59.000Z',
    state,
    reason: state === 'operational' ? 'Serving' : 'The broker is unreachable',
    live_state_age_s: 0.5,
    ingest_reachable: true,
    requests_per_minute: 120,
    error_rate: 0,
    p99_ms: 3.2,
    open_streams: 7,
  });
  const list = edgeHealth(
    [
      { payload: beat('b', 'operational'), heardMs: NOW - 1_000 },
      { payload: beat('a', 'degraded'), heardMs: NOW - EDGE_SILENT_MS - 5_000 },
      { payload: { nonsense: true }, heardMs: NOW },
    ],
    NOW,
  );
  t.same(
    list.map((e) => [e.node_id, e.state]),
    [
      ['a', 'down'],
      ['b', 'operational'],
    ],
  );
  t.equal(list[0]!.reason, 'No heartbeat for 15 s');
  t.equal(list[1]!.heartbeat_age_s, 1);
  for (const e of list) t.ok(EdgeHealthSchema.safeParse(e).success, `${e.node_id} matches its schema`);
  t.equal(edgeWeight('down'), 'degraded', 'a lost edge degrades the deployment, clients reach the others');
});
