import { rollupCommand } from './rollup-command.ts';

export const performanceCommand = rollupCommand(
  'performance',
  'Print how a route ran by day, week or period: on time, headways, bunching, travel, dwell, predictions',
  {
    routeUsage: '--route <id>',
    route: 'bus/streetcar route id or rail line id',
    mode: 'bus (default), rail or streetcar',
    json: 'the measures as one JSON document',
  },
);
