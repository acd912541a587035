import { rollupCommand } from './rollup-command.ts';

export const reliabilityCommand = rollupCommand(
  'reliability',
  'Print scheduled, delivered and canceled trips of a route by day, week or period',
  {
    routeUsage: '[--route <id>]',
    route: 'bus/streetcar route id or rail line id (default: every route of the mode)',
    mode: "bus, rail or streetcar (default: the route's or line's own; without --route, every mode with routes)",
    json: 'the rollup as JSON: one document per mode, one line each',
  },
);
