// The parts of the status document that describe the nodes of a multi-node deploy
// (docs/guides/multi-node.md): the node that answers (its broker link, on an edge the age of its
// live state and whether the ingest node answers) and, on the ingest node, every edge's health
// as the edges publish it through the broker.
import { z } from 'zod';
import 'zod-openapi';
import { ComponentStateSchema } from './component-state.ts';

const tsOrNull = (description: string) => z.string().nullable().meta({ description, format: 'date-time' });
const count = (description: string) => z.number().int().nonnegative().meta({ description });
const secondsOrNull = (description: string) => z.number().nonnegative().nullable().meta({ description });

export const NODE_ROLES = ['all', 'ingest', 'edge'] as const;

export const BrokerLinkSchema = z
  .object({
    state: z.enum(['up', 'down']).meta({ description: 'The connection to the broker (Redis).' }),
    down_since: tsOrNull('When the connection was lost; null while it is up.'),
  })
  .meta({ id: 'BrokerLink' });

export const LiveStateCopySchema = z
  .object({
    updated_at: tsOrNull(
      'When the ingest node last said the state this edge holds was current (a change or its once-a-second beat), by ' +
        "the ingest node's clock; null before the edge first read it.",
    ),
    age_s: secondsOrNull('Seconds since updated_at.'),
    snapshots: count('Whole-state reads: at start, after a reconnect, a missed change or a restarted ingest node.'),
    changes: count('Changes applied since the start.'),
  })
  .meta({ id: 'LiveStateCopy', description: "An edge's copy of the live state." });

export const IngestReachSchema = z
  .object({
    url: z.string().nullable().meta({ description: "The ingest node's base URL; null when none is known." }),
    source: z
      .enum(['config', 'broker'])
      .nullable()
      .meta({ description: '`config` (ingest.url) or `broker` (the address the ingest node announces).' }),
    reachable: z
      .boolean()
      .nullable()
      .meta({ description: 'Whether it answered the last check (every 2 s); null before the first.' }),
    checked_at: tsOrNull('The last check.'),
    last_ok_at: tsOrNull('The last check it answered.'),
    error: z.string().nullable().meta({ description: 'Why the last check failed; null after a good one.' }),
    forwarded: count('Requests forwarded to it since the start (history, account, exports, dashboard).'),
    forward_failures: count('Of those, answered 503 here because it did not answer.'),
  })
  .meta({ id: 'IngestReach', description: 'How an edge reaches the ingest node.' });

export const NodeStatusSchema = z
  .object({
    role: z.enum(NODE_ROLES).meta({ description: 'What this process runs (serve --role).' }),
    node_id: z.string().meta({ description: 'host:port of this process.', example: 'edge-2.internal:8081' }),
    state: ComponentStateSchema,
    reason: z.string().meta({
      description: 'Why the node is in this state, in words.',
      example: 'The broker is unreachable since 14:02:11 UTC: serving the live state of 38 s ago',
    }),
    broker: BrokerLinkSchema,
    live_state: LiveStateCopySchema.nullable().meta({
      description: "An edge's copy of the live state; null on the ingest node, which makes it.",
    }),
    ingest: IngestReachSchema.nullable().meta({ description: 'On an edge, the ingest node; null on the ingest node.' }),
  })
  .meta({
    id: 'NodeStatus',
    description:
      'The node that answered. An edge answers its own status even with the broker and the ingest node both down.',
  });

/** What an edge publishes through the broker every 2 s (and deletes when it stops). */
export const EdgeHeartbeatSchema = z.object({
  n: z.number().int().nonnegative(),
  node_id: z.string(),
  url: z.string().nullable(),
  started_at: z.string(),
  sent_at: z.string(),
  state: ComponentStateSchema,
  reason: z.string(),
  live_state_age_s: z.number().nullable(),
  ingest_reachable: z.boolean().nullable(),
  requests_per_minute: z.number().nonnegative(),
  error_rate: z.number().min(0).max(1).nullable(),
  p99_ms: z.number().nonnegative().nullable(),
  open_streams: z.number().int().nonnegative(),
});
export type EdgeHeartbeat = z.infer<typeof EdgeHeartbeatSchema>;

export const EdgeHealthSchema = z
  .object({
    node_id: z.string(),
    url: z.string().nullable().meta({ description: 'The address the edge listens on, as it says.' }),
    state: ComponentStateSchema.meta({
      description:
        'As the edge judges itself (its broker link, live state, reach of the ingest node and API), or `down` when ' +
        'its heartbeat stopped.',
    }),
    reason: z.string(),
    heard_at: z.string().meta({ description: 'Its last heartbeat, as this node saw it arrive.', format: 'date-time' }),
    heartbeat_age_s: z.number().nonnegative(),
    started_at: z.string().meta({ format: 'date-time' }),
    live_state_age_s: secondsOrNull("The age of the edge's live state in its last heartbeat."),
    ingest_reachable: z.boolean().nullable(),
    requests_per_minute: z.number().nonnegative().meta({ description: 'Its API requests, last 5 minutes.' }),
    error_rate: z.number().min(0).max(1).nullable(),
    p99_ms: z.number().nonnegative().nullable(),
    open_streams: count('Its open event streams.'),
  })
  .meta({ id: 'EdgeHealth', description: "An edge's health, from the heartbeat it publishes through the broker." });

export type NodeStatus = z.infer<typeof NodeStatusSchema>;
export type EdgeHealth = z.infer<typeof EdgeHealthSchema>;
