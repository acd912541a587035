// Formatting and link checks of the dashboard, free of the DOM (tests import them directly).

export function fmtNumber(n: unknown): string {
  return typeof n === 'number' && Number.isFinite(n) ? n.toLocaleString('en-US', { maximumFractionDigits: 1 }) : '—';
}

export function fmtBytes(value: unknown): string {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let n = value;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  return `${i === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)} ${units[i]}`;
}

export function fmtSeconds(value: unknown): string {
  const s = Math.max(0, Math.round(Number(value) || 0));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 && s < 600 ? ` ${s % 60} s` : ''}`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${Math.floor(s / 86400)} d ${Math.floor((s % 86400) / 3600)} h`;
}

/** A share that may be null (too few observations): "n/a", never 0. */
export function fmtPct(v: number | null): string {
  return v === null ? 'n/a' : `${v.toLocaleString('en-US', { maximumFractionDigits: 2 })}%`;
}

/** Seconds that may be null or negative (an excess wait shorter than scheduled). */
export function fmtFigureSeconds(v: number | null): string {
  return v === null ? 'n/a' : v < 0 ? `−${fmtSeconds(-v)}` : fmtSeconds(v);
}

/** ISO instant → "YYYY-MM-DD HH:MM UTC"; the server's clock and zone, not the browser's. */
export function fmtTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** An href for a link the server sent: http(s) only, so no data or script URL ever becomes a link. */
export function safeHref(url: unknown, base: string): string | null {
  if (typeof url !== 'string' || url === '') return null;
  try {
    const parsed = new URL(url, base);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null;
  } catch {
    return null;
  }
}

/** The link when it stays on `base`'s origin (the key is never sent elsewhere). */
export function sameOrigin(url: unknown, base: string): string | null {
  const href = safeHref(url, base);
  return href !== null && new URL(href).origin === new URL(base).origin ? href : null;
}

/** problem+json → "Title: detail"; anything else → its HTTP status. */
export function problemText(body: unknown, status: number): string {
  if (body && typeof body === 'object') {
    const { title, detail } = body as { title?: unknown; detail?: unknown };
    if (typeof title === 'string' || typeof detail === 'string') {
      return [title, detail].filter((s): s is string => typeof s === 'string' && s !== '').join(': ');
    }
  }
  return `HTTP ${status}`;
}
