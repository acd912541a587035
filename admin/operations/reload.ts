import { formatIdChanges } from '../../core/served-id-changes.ts';
import type { CommandIO, Operation, ReloadOutcome } from './types.ts';

// `transit-api reload`: the service re-reads its config file (as on SIGHUP) and answers with
// what changed. Exit 0 when applied, 2 when the file was refused (the running config is kept),
// 1 when something could not be applied (a schedule whose import failed).

export function formatReload(outcome: ReloadOutcome): string[] {
  const file = outcome.file ?? 'the built-in config';
  if (!outcome.applied) {
    return [
      `reload refused: ${file} is invalid; the running config is kept`,
      ...outcome.problems.map((p) => `  - ${p}`),
    ];
  }
  const list = (ids: string[]) => (ids.length ? ids.join(', ') : '-');
  const lines = [`reloaded ${file}`];
  for (const what of ['feeds', 'schedules'] as const) {
    const d = outcome[what];
    lines.push(`  ${what.padEnd(9)} added ${list(d.added)}; changed ${list(d.changed)}; removed ${list(d.removed)}`);
  }
  if (outcome.failed.length) lines.push(...outcome.failed.map((f) => `  failed: ${f}`));
  // never silent: a client's ids change here (docs/guides/api.md, Ids across agencies)
  if (outcome.ids?.length) lines.push(...formatIdChanges(outcome.ids).map((l) => `  ids: ${l}`));
  if (outcome.needs_restart.length)
    lines.push(`  needs restart: ${outcome.needs_restart.join(', ')} (kept as running until then)`);
  return lines;
}

export function reloadExitCode(outcome: ReloadOutcome): number {
  if (!outcome.applied) return 2;
  return outcome.failed.length ? 1 : 0;
}

export function printReload(outcome: ReloadOutcome, io: CommandIO, json: boolean): number {
  const code = reloadExitCode(outcome);
  if (json) io.out(JSON.stringify(outcome));
  else for (const line of formatReload(outcome)) (code === 0 ? io.out : io.err)(line);
  return code;
}

export const reloadOperation: Operation = {
  serviceOnly: true,
  async run({ service }, { values }, io) {
    if (!service) throw new Error('reload runs inside the service');
    return printReload(await service.reload(), io, values.json === true);
  },
};
