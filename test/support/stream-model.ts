// What a client of a query stream holds: the reset body's items, then add/update/remove applied.
// Tests compare it with the JSON endpoint's answer to show that nothing was missed or repeated.
export class StreamModel {
  readonly items = new Map<string, Record<string, unknown>>();
  resets = 0;
  /** ids of every event applied, in order */
  readonly ids: number[] = [];

  apply(event: string, data: string, id: string): void {
    if (id !== '') this.ids.push(Number(id));
    const value = JSON.parse(data) as Record<string, unknown>;
    if (event === 'reset') {
      this.resets++;
      this.items.clear();
      for (const item of value.data as Array<Record<string, unknown>>) this.items.set(String(item.id), item);
    } else if (event === 'add' || event === 'update') {
      const { type: _type, ...item } = value;
      this.items.set(String(item.id), item);
    } else if (event === 'remove') {
      this.items.delete(String(value.id));
    }
  }

  /** the items sorted by id, to compare with a JSON body's data */
  sorted(): Array<Record<string, unknown>> {
    return [...this.items.values()].sort((a, b) => String(a.id).localeCompare(String(b.id)));
  }

  idsIncrease(): boolean {
    return this.ids.every((id, i) => i === 0 || id > this.ids[i - 1]!);
  }
}

export function sortedData(body: { data: Array<Record<string, unknown>> }): Array<Record<string, unknown>> {
  return [...body.data].sort((a, b) => String(a.id).localeCompare(String(b.id)));
}
