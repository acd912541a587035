// Reading a command's option values, as node:util parseArgs left them in CommandRequest.values:
// the same checks and messages for every operation, whether it runs in the CLI or in the service.
import { UsageError } from '../../core/usage-error.ts';

/** A string option's value; undefined when absent. */
export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** An option that takes one of `allowed`: `fallback` (or undefined) when absent, a UsageError when another value. */
export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[], fallback: T): T;
export function oneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T | undefined;
export function oneOf<T extends string>(
  name: string,
  value: unknown,
  allowed: readonly T[],
  fallback?: T,
): T | undefined {
  if (value === undefined) return fallback;
  if (!(allowed as readonly unknown[]).includes(value))
    throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`);
  return value as T;
}

/** A UsageError for the first option given that `command` does not take (`shared`: options every command takes). */
export function onlyOptions(
  command: string,
  values: Readonly<Record<string, unknown>>,
  allowed: readonly string[],
  shared: readonly string[] = [],
): void {
  for (const [name, value] of Object.entries(values)) {
    if (value === undefined || allowed.includes(name) || shared.includes(name)) continue;
    throw new UsageError(`--${name} is not an option of ${command}`);
  }
}
