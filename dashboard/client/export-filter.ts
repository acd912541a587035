// The export list's filter, free of the DOM (tests import it directly): the form's values checked
// before any request (the list is metered), the request path, and its description.

export const EXPORTS_PAGE_SIZE = 50;

export interface ExportFilter {
  dataset: string;
  format: string;
  state: string;
  from: string;
  to: string;
}

export const EXPORT_FILTER_NAMES = ['dataset', 'format', 'state', 'from', 'to'] as const;
export const DEFAULT_EXPORT_FILTER: Readonly<ExportFilter> = Object.freeze({
  dataset: '',
  format: '',
  state: 'ready',
  from: '',
  to: '',
});

export interface ExportFilterValues extends Partial<Record<keyof ExportFilter, string>> {
  /** a date input's value is '' both when empty and when half typed: badInput tells the two apart */
  fromBad?: boolean;
  toBad?: boolean;
}

export type CheckedFilter =
  | { filter: ExportFilter; error?: undefined; field?: undefined }
  | { error: string; field: 'from' | 'to'; filter?: undefined };

export function checkExportFilter(values: ExportFilterValues): CheckedFilter {
  const filter = { ...DEFAULT_EXPORT_FILTER };
  for (const name of EXPORT_FILTER_NAMES) filter[name] = String(values[name] || '');
  if (!filter.state) filter.state = 'ready';
  if (values.fromBad)
    return { error: 'The "from" service day is incomplete: pick a date or clear the field.', field: 'from' };
  if (values.toBad)
    return { error: 'The "to" service day is incomplete: pick a date or clear the field.', field: 'to' };
  if (filter.from && filter.to && filter.from > filter.to) {
    return {
      error: `The range ends before it starts: "from" (${filter.from}) is after "to" (${filter.to}).`,
      field: 'from',
    };
  }
  return { filter };
}

/** The first page for a filter: every chosen value as a query parameter, empty ones left out. */
export function exportsPath(filter: ExportFilter): string {
  const params = new URLSearchParams({ limit: String(EXPORTS_PAGE_SIZE) });
  for (const name of EXPORT_FILTER_NAMES) if (filter[name]) params.set(name, filter[name]);
  return `history/exports?${params.toString()}`;
}

export function isDefaultFilter(filter: ExportFilter): boolean {
  return EXPORT_FILTER_NAMES.every((name) => filter[name] === DEFAULT_EXPORT_FILTER[name]);
}

/** "ready files · alerts · ndjson.gz · service days 2024-03-01 to 2024-03-10" */
export function describeFilter(filter: ExportFilter): string {
  const parts = [`${filter.state} files`];
  if (filter.dataset) parts.push(filter.dataset);
  if (filter.format) parts.push(filter.format);
  if (filter.from && filter.to) parts.push(`service days ${filter.from} to ${filter.to}`);
  else if (filter.from) parts.push(`service days from ${filter.from}`);
  else if (filter.to) parts.push(`service days up to ${filter.to}`);
  return parts.join(' · ');
}
