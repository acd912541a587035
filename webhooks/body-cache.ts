// Message bodies the outbox just stored, so the worker's claim need not read them back.
// Bounded; a miss only costs a query.
export class BodyCache {
  private readonly bodies = new Map<string, string>();

  constructor(private readonly capacity = 20_000) {}

  get(messageId: string): string | undefined {
    return this.bodies.get(messageId);
  }

  set(messageId: string, body: string): void {
    if (this.bodies.size >= this.capacity) {
      // oldest first: fresh messages are the ones about to be claimed
      const oldest = this.bodies.keys().next();
      if (!oldest.done) this.bodies.delete(oldest.value);
    }
    this.bodies.set(messageId, body);
  }

  get size(): number {
    return this.bodies.size;
  }
}
