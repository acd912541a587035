// Where the checks report: a tally per rule for every poll (a count and the first entity, nothing
// built per finding), or the full list with a one-line reason each for `transit-api validate`.
import type { FindingCounts } from '../../core/types.ts';
import { RULE_INDEX, RULES, ruleSpec, type RuleId, type Severity } from './rules.ts';

export interface Finding {
  rule: RuleId;
  severity: Severity;
  /** the FeedEntity id it is about (else its trip or vehicle id); null: the header or the body */
  entity_id: string | null;
  reason: string;
}

/**
 * A finding's one-line reason from up to three values. The checks pass functions that use their
 * arguments only: a closure over a check's locals would make V8 allocate them a context on
 * every call, found or not (per entity, per stop time update).
 */
export type Reason<A, B, C> = (a: A, b: B, c: C) => string;

export interface FindingSink {
  /** `reason` is only called by sinks that keep reasons: a poll's tally builds no string. */
  add<A = undefined, B = undefined, C = undefined>(
    rule: RuleId,
    entity: string | null,
    reason?: Reason<A, B, C>,
    a?: A,
    b?: B,
    c?: C,
  ): void;
}

const NONE: FindingCounts = Object.freeze({}) as FindingCounts;

/** Counts per rule and the first entity each fired on. */
export class TallySink implements FindingSink {
  private readonly counts = new Int32Array(RULES.length);
  private readonly examples: (string | null)[] = new Array<string | null>(RULES.length).fill(null);
  private fired = 0;

  add(rule: RuleId, entity: string | null): void {
    const i = RULE_INDEX.get(rule)!;
    if (this.counts[i]!++ === 0) {
      this.examples[i] = entity;
      this.fired++;
    }
  }

  result(): FindingCounts {
    if (this.fired === 0) return NONE;
    const out: FindingCounts = {};
    for (let i = 0; i < RULES.length; i++) {
      if (this.counts[i]! > 0) out[RULES[i]!.id] = { count: this.counts[i]!, example: this.examples[i]! };
    }
    return out;
  }
}

/** Every finding with its reason, in the order found. */
export class ListSink implements FindingSink {
  readonly findings: Finding[] = [];

  add<A, B, C>(rule: RuleId, entity: string | null, reason?: Reason<A, B, C>, a?: A, b?: B, c?: C): void {
    const spec = ruleSpec(rule)!;
    const text = reason ? reason(a as A, b as B, c as C) : spec.title;
    this.findings.push({ rule, severity: spec.severity, entity_id: entity, reason: text });
  }

  counts(): FindingCounts {
    const out: FindingCounts = {};
    for (const f of this.findings) {
      const tally = out[f.rule];
      if (tally) tally.count++;
      else out[f.rule] = { count: 1, example: f.entity_id };
    }
    return out;
  }
}
