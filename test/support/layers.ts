// The production folders and the direction imports may run between them: the one table that
// test/architecture.test.ts enforces and README (Architecture, "Import direction") shows; the
// architecture test fails when the two differ.
//
// A folder imports folders of lower tiers. Within a tier, folders may import each other only
// where the tier says so, and never in a cycle. pipeline/ and store/ share a tier that allows no
// imports between them: the pipeline writes through the ports in core/ (core/ports.ts) and the
// store never reads pipeline code.
export interface Tier {
  folders: readonly string[];
  /** folders of this tier may import each other (without a cycle) */
  siblings: boolean;
  /** what the README says the tier may import */
  note: string;
}

export const LAYERS: readonly Tier[] = [
  { folders: ['core'], siblings: false, note: 'nothing internal' },
  {
    folders: ['pipeline', 'store'],
    siblings: false,
    note: 'core/ only; pipeline/ reaches the store through the ports in core/',
  },
  {
    folders: ['stream', 'webhooks', 'exports', 'accounts', 'broker', 'observability', 'fixtures'],
    siblings: true,
    note: 'tiers 0–1, and each other without a cycle',
  },
  {
    folders: ['http', 'docs', 'status', 'dashboard'],
    siblings: true,
    note: 'tiers 0–2, and each other without a cycle',
  },
  {
    folders: ['admin', 'app', 'cli', 'binary'],
    siblings: true,
    note: 'every tier below, and each other without a cycle',
  },
];

/** Top-level folders that are not production code: nothing in the layers may import them. */
export const NOT_PRODUCTION = ['test', 'bench', 'scripts', 'node_modules', 'dist', 'data', 'coverage'];

/** Production files run by path rather than imported (npm scripts, build entries). */
export const ENTRY_POINTS = ['cli/main.ts', 'cli/dist-entry.ts', 'binary/entry.ts', 'fixtures/generate.ts'];

export const PRODUCTION_FOLDERS: readonly string[] = LAYERS.flatMap((tier) => tier.folders);
