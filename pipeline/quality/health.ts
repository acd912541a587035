// A feed's rules over time: findings of each checked body added up, and when a rule starts or
// stops firing. A rule starts on the first body it fires in and stops after CLEAR_AFTER checked
// bodies in a row without it, so one clean body between two bad ones does not announce twice.
import type { EventData } from '../../core/events.ts';
import type { FeedRuleHealth } from '../../core/ports.ts';
import type { FindingCounts } from '../../core/types.ts';
import { ruleSpec } from './rules.ts';

export const CLEAR_AFTER = 3;

/** A rule that started or stopped firing for the feed; `since_ms`: when it started. */
export interface RuleChange {
  rule: FeedRuleHealth;
  firing: boolean;
  since_ms: number;
}

export interface FoldResult {
  rules: FeedRuleHealth[];
  changes: RuleChange[];
}

/** The feed's rules after one checked body; the list given is left as it was. */
export function foldFindings(
  before: readonly FeedRuleHealth[] | undefined,
  findings: FindingCounts,
  atMs: number,
): FoldResult {
  const changes: RuleChange[] = [];
  const rules: FeedRuleHealth[] = [];
  const seen = new Set<string>();
  for (const r of before ?? []) {
    seen.add(r.rule);
    const tally = findings[r.rule];
    if (tally) {
      const next: FeedRuleHealth = {
        ...r,
        total: r.total + tally.count,
        last: tally.count,
        example: tally.example,
        last_seen_ms: atMs,
        clean: 0,
        firing_since_ms: r.firing_since_ms ?? atMs,
      };
      if (r.firing_since_ms === null) changes.push({ rule: next, firing: true, since_ms: atMs });
      rules.push(next);
    } else {
      const clean = r.clean + 1;
      const stops = r.firing_since_ms !== null && clean >= CLEAR_AFTER;
      const next: FeedRuleHealth = { ...r, last: 0, clean, firing_since_ms: stops ? null : r.firing_since_ms };
      if (stops) changes.push({ rule: next, firing: false, since_ms: r.firing_since_ms! });
      rules.push(next);
    }
  }
  for (const [rule, tally] of Object.entries(findings)) {
    if (seen.has(rule)) continue;
    const next: FeedRuleHealth = {
      rule,
      total: tally.count,
      last: tally.count,
      example: tally.example,
      last_seen_ms: atMs,
      firing_since_ms: atMs,
      clean: 0,
    };
    changes.push({ rule: next, firing: true, since_ms: atMs });
    rules.push(next);
  }
  return { rules, changes };
}

/** The feed.rule_firing / feed.rule_cleared event data of one rule's change. */
export function ruleChangeData(feedId: string, change: RuleChange): EventData<'feed.rule_firing'> {
  const { rule: r, firing } = change;
  const spec = ruleSpec(r.rule);
  return {
    source: feedId,
    rule: r.rule,
    severity: spec?.severity ?? 'error',
    title: spec?.title ?? r.rule,
    unusable: spec?.unusable ?? false,
    firing,
    findings: firing ? r.last : 0,
    example_entity_id: r.example,
    since: new Date(change.since_ms).toISOString(),
    last_seen_at: new Date(r.last_seen_ms).toISOString(),
  };
}
