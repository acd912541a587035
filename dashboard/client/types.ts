// The API's answers as the dashboard reads them (the OpenAPI document is the authority; only the
// fields used here are listed).
import type { PerformanceRow } from '../../core/performance-row.ts';

export type { PerformanceRow, PredictionAccuracy } from '../../core/performance-row.ts';

export interface RateWindow {
  limit: number;
  remaining: number;
  reset_seconds: number;
}

export interface PlanLimits {
  requests_per_window: number;
  window_seconds: number;
  sse_streams: number;
  max_page_size: number;
  webhook_endpoints: number;
  history_exports: boolean;
}

export interface StreamsView {
  allowed: number;
  open: number;
  connections: Array<{ endpoint: string; opened_at: string; minutes: number }>;
}

export interface Account {
  plan: string;
  key: { prefix: string; name: string | null; test: boolean; created_at: string };
  limits: PlanLimits;
  window: RateWindow;
  streams: StreamsView;
}

export interface UsageDay {
  date: string;
  requests: number;
  errors: number;
  connection_minutes: number;
}

export interface Usage {
  from: string;
  to: string;
  unit_timezone: string;
  days: UsageDay[];
  totals?: { requests?: number; errors?: number; connection_minutes?: number };
}

export interface Endpoint {
  id: string;
  url: string;
  description: string | null;
  enabled: boolean;
  disabled_reason: string | null;
  failing_since: string | null;
  created_at: string;
  filters: { event_types?: string[] } | null;
}

export interface Delivery {
  id: string;
  endpoint_id: string;
  event_type: string;
  state: string;
  attempt_count: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: string | null;
  created_at: string;
}

export interface ExportFile {
  id: string;
  dataset: string;
  part: string;
  service_date: string;
  format: string;
  state: string;
  error: string | null;
  rows: number | null;
  bytes: number | null;
  sha256: string | null;
  created_at: string;
  download: { url: string; expires_at: string } | null;
}

export interface Page<T> {
  data: T[];
  links?: { next?: string | null };
}

/** An entry of GET /api/v1/{bus,streetcar} (route_id) or /api/v1/rail (line). */
export interface DirectoryEntry {
  route_id?: string;
  line?: string;
  short_name: string | null;
  long_name: string | null;
}

export interface PerformanceRollup {
  data: PerformanceRow[];
  meta: {
    mode: string;
    route_id: string;
    group: string;
    from: string;
    to: string;
    timezone: string;
    on_time_window_s: [number, number];
    min_observations: number;
    notes: string[];
  };
}
