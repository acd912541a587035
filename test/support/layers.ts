// The production folders and the direction imports may run between them, as folders.json (the
// one list of the project's folders) gives them: test/architecture.test.ts enforces the tiers and
// checks the table docs/guides/architecture.md shows ("Import direction") against them.
//
// A folder imports folders of lower tiers. Within a tier, folders may import each other only
// where the tier says so, and never in a cycle. pipeline/ and store/ share a tier that allows no
// imports between them: the pipeline writes through the ports in core/ (core/ports.ts) and the
// store never reads pipeline code.
import { readFileSync } from 'node:fs';

export interface Tier {
  folders: readonly string[];
  /** folders of this tier may import each other (without a cycle) */
  siblings: boolean;
  /** what the architecture guide says the tier may import */
  note: string;
}

interface Folders {
  tiers: Tier[];
  browserCode: string[];
  entryPoints: string[];
  notProduction: string[];
}

/** folders.json, at the root of the checkout */
export const FOLDERS_FILE = new URL('../../folders.json', import.meta.url);
const folders = JSON.parse(readFileSync(FOLDERS_FILE, 'utf8')) as Folders;

export const LAYERS: readonly Tier[] = folders.tiers;

/** Top-level folders that are not production code: nothing in the layers may import them. */
export const NOT_PRODUCTION: readonly string[] = folders.notProduction;

/** Production files run by path rather than imported (npm scripts, build entries). */
export const ENTRY_POINTS: readonly string[] = folders.entryPoints;

/** The pages' browser code: type-checked for the DOM (tsconfig.browser.json), run in Chromium. */
export const BROWSER_CODE: readonly string[] = folders.browserCode;

export const PRODUCTION_FOLDERS: readonly string[] = LAYERS.flatMap((tier) => tier.folders);
