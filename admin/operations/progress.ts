// Progress for long work: a redrawn line on a TTY, nothing (but the final summary) otherwise,
// so logs and pipes stay clean.
export function progressReporter(label: string, stream: NodeJS.WriteStream = process.stderr) {
  const tty = stream.isTTY === true;
  let last = 0;
  return {
    update(step: string, done: number, total: number): void {
      if (!tty) return;
      const now = Date.now();
      if (now - last < 80 && done < total) return;
      last = now;
      const pct = total > 0 ? Math.min(100, Math.round((done / total) * 100)) : 0;
      const width = 24;
      const filled = Math.round((pct / 100) * width);
      stream.write(
        `\r${label} ${step.padEnd(16)} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` +
          `${String(pct).padStart(3)}%`,
      );
    },
    done(): void {
      if (tty) stream.write('\r\x1b[K');
    },
  };
}
