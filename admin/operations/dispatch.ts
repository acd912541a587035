// The operator commands by name, and the one place their errors become exit codes, so a
// command gives the same output and code in the CLI and through the admin channel.
import { capturedIO, type CommandIO, type CommandRequest, type CommandResult } from '../protocol.ts';
import { ConfigError } from '../../core/config.ts';
import { UsageError } from '../../core/usage-error.ts';
import { backupOperation, snapshotOperation } from './copies.ts';
import { exportOperation } from './export.ts';
import { importGtfsOperation } from './import-gtfs.ts';
import { keysOperation } from './keys.ts';
import { performanceOperation } from './performance.ts';
import { reliabilityOperation } from './reliability.ts';
import { reloadOperation } from './reload.ts';
import { statusOperation } from './status.ts';
import type { Operation, OperationContext } from './types.ts';

export const OPERATIONS = {
  keys: keysOperation,
  reliability: reliabilityOperation,
  performance: performanceOperation,
  export: exportOperation,
  'import-gtfs': importGtfsOperation,
  snapshot: snapshotOperation,
  backup: backupOperation,
  status: statusOperation,
  reload: reloadOperation,
} as const satisfies Record<string, Operation>;

export type OperationName = keyof typeof OPERATIONS;

export function isOperationName(name: string): name is OperationName {
  return Object.hasOwn(OPERATIONS, name);
}

/** Bad arguments exit 2 with the message, failures exit 1 with theirs; nothing escapes. */
export async function executeOperation(
  operation: Operation,
  ctx: OperationContext,
  request: CommandRequest,
  io: CommandIO,
): Promise<number> {
  try {
    operation.check?.(request);
    return await operation.run(ctx, request, io);
  } catch (err) {
    if (err instanceof UsageError || err instanceof ConfigError) {
      io.err(err.message);
      return 2;
    }
    io.err(err instanceof Error ? err.message : String(err));
    if (process.env.TRANSIT_DEBUG && err instanceof Error && err.stack) io.err(err.stack);
    return 1;
  }
}

/** Runs a command inside the service, keeping what it prints for the answer. */
export async function executeCaptured(
  name: OperationName,
  ctx: OperationContext,
  request: CommandRequest,
): Promise<CommandResult> {
  const io = capturedIO();
  return io.result(await executeOperation(OPERATIONS[name], ctx, request, io));
}

export type { Operation, OperationContext, ReloadOutcome, ServiceHooks, ServiceInfo } from './types.ts';
