// What components report for metrics, as small ports: the layers below app/ never import the
// metrics client. observability/ implements them over prom-client; app/ wires the two.

/** The HTTP pipeline, once per request: the route's id ("(unmatched)" when none), status, latency. */
export interface RequestObserver {
  request(route: string, status: number, seconds: number): void;
}

/** A duration in seconds, e.g. how long a statement waited for the database's one connection. */
export type DurationObserver = (seconds: number) => void;
