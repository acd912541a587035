// The core route table (alerts, realtime, rail lines, route and stop directories), in the order
// of the specification's endpoint list. Other features (reliability, streams, webhooks, exports,
// status) add their own RouteDef[] beside it.
import type { RouteDef } from '../types.ts';
import { alertRoutes } from './alerts.ts';
import type { CoreRouteDeps } from './deps.ts';
import { directoryRoutes } from './directories.ts';
import { railRoutes } from './rail.ts';
import { vehicleRoutes } from './vehicles.ts';

export function coreRoutes(deps: CoreRouteDeps): RouteDef[] {
  const [railLines, railRealtime] = railRoutes(deps);
  const [railAlerts, busAlerts, streetcarAlerts, allAlerts] = ((a) => [a[1]!, a[2]!, a[3]!, a[0]!])(alertRoutes(deps));
  const [bus, streetcar] = directoryRoutes(deps);
  const [busRealtime, busRouteRealtime] = vehicleRoutes(deps, 'bus');
  const [streetcarRealtime, streetcarRouteRealtime] = vehicleRoutes(deps, 'streetcar');
  return [
    railLines!,
    railRealtime!,
    railAlerts,
    bus!,
    busRealtime!,
    busAlerts,
    busRouteRealtime!,
    streetcar!,
    streetcarRealtime!,
    streetcarAlerts,
    streetcarRouteRealtime!,
    allAlerts,
  ];
}
