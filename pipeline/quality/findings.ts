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

export interface FindingSink {
  /** `reason` is only called by sinks that keep reasons: a poll's tally builds no string. */
  add(rule: RuleId, entity: string | null, reason?: () => string): void;
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

  add(rule: RuleId, entity: string | null, reason?: () => string): void {
    const spec = ruleSpec(rule)!;
    this.findings.push({ rule, severity: spec.severity, entity_id: entity, reason: reason ? reason() : spec.title });
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
