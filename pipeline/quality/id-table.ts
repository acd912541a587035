// Ids of a decoded snapshot (vehicle, trip, route and stop ids) looked up in a table hashed in
// JavaScript. A string fresh from the decoder has no hash yet: V8's Map and Set compute and compare
// it through slower paths, two to three times the cost per id of this table on a 5,000-vehicle
// snapshot, which made them most of what the rules cost. Open addressing, each slot's hash beside
// its entry and each key beside its value (one cache line each); nothing is allocated per id.

/** FNV-1a over the UTF-16 code units, its high bits folded into the low ones the mask keeps. */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h ^ (h >>> 15);
}

const MIN_SLOTS = 16;

/** Strings and a value for each; a set when the values are not used. */
export class IdTable<V> {
  /**
   * Two numbers a slot: the key's hash and its entry's index + 1 (0: empty). The slots are a power
   * of two, at least twice the entries; a table cleared for fewer entries uses the start of them.
   */
  private slots = new Int32Array(MIN_SLOTS * 2);
  private mask = MIN_SLOTS - 1;
  /** key, value, key, value… in the order added */
  private entries: unknown[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Empties the table, sized for `expected` entries (it grows past them if need be). */
  clear(expected = 0): void {
    let size = MIN_SLOTS;
    while (size < expected * 2) size *= 2;
    if (size * 2 > this.slots.length) this.slots = new Int32Array(size * 2);
    else this.slots.fill(0, 0, size * 2);
    this.mask = size - 1;
    this.count = 0;
    // a new array rather than the old one overwritten: it holds this snapshot's strings, young like
    // them (no old-to-young pointers for the garbage collector to track), and lets the last
    // snapshot's ids go
    this.entries = new Array(expected * 2);
  }

  /** The entry's index, or -1 when the key is not in the table. */
  indexOf(key: string): number {
    const h = hashOf(key);
    const { slots, entries, mask } = this;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const at = slots[2 * s + 1]! - 1;
      if (at < 0) return -1;
      if (slots[2 * s] === h && entries[2 * at] === key) return at;
    }
  }

  valueAt(index: number): V {
    return this.entries[2 * index + 1] as V;
  }

  /** Adds the key with its value; false, leaving the table as it was, when the key is already in it. */
  add(key: string, value: V): boolean {
    if ((this.count + 1) * 2 > this.mask + 1) this.grow();
    const h = hashOf(key);
    const { slots, entries, mask } = this;
    let s = h & mask;
    for (; ; s = (s + 1) & mask) {
      const at = slots[2 * s + 1]! - 1;
      if (at < 0) break;
      if (slots[2 * s] === h && entries[2 * at] === key) return false;
    }
    const at = this.count++;
    slots[2 * s] = h;
    slots[2 * s + 1] = at + 1;
    entries[2 * at] = key;
    entries[2 * at + 1] = value;
    return true;
  }

  private grow(): void {
    const old = this.slots;
    const oldSize = this.mask + 1;
    const size = oldSize * 2;
    const slots = new Int32Array(size * 2);
    const mask = size - 1;
    for (let o = 0; o < oldSize; o++) {
      const entry = old[2 * o + 1]!;
      if (entry === 0) continue;
      const h = old[2 * o]!;
      let s = h & mask;
      while (slots[2 * s + 1] !== 0) s = (s + 1) & mask;
      slots[2 * s] = h;
      slots[2 * s + 1] = entry;
    }
    this.slots = slots;
    this.mask = mask;
  }
}
