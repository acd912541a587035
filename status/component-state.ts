// The states every component of the status document is in (its own module, so the schemas of
// the document's parts can share it without importing each other).
import { z } from 'zod';
import 'zod-openapi';

export const COMPONENT_STATES = ['operational', 'degraded', 'down', 'unknown'] as const;
export type ComponentState = (typeof COMPONENT_STATES)[number];
/** The states a component can be recorded in; `unknown` (nothing observed yet) is never stored. */
export type KnownState = Exclude<ComponentState, 'unknown'>;

export const ComponentStateSchema = z.enum(COMPONENT_STATES).meta({
  id: 'ComponentState',
  description:
    '`operational`; `degraded` (working with problems: a failed poll, stale data, some server errors); `down`; ' +
    '`unknown` until the first observation after a start (at most two poll intervals for a feed).',
});
