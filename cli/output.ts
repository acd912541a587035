// What a command prints for its user: plain text, not logging. Results (tables, keys, summaries)
// go to stdout so they can be piped; usage errors and refusals meant for the person at the
// terminal go to stderr. Diagnostics of the running service go to the logger (core/logger.ts).
export function print(line = ''): void {
  process.stdout.write(`${line}\n`);
}

export function printError(line: string): void {
  process.stderr.write(`${line}\n`);
}
