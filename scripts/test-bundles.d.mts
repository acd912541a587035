export function projectFolders(root: string): { production: string[]; tests: string[]; browserCode: string[] };

export function testFiles(root: string, selections?: string[]): string[];

export function bundleOf(bundleDir: string, file: string): string;

export function buildTestBundles(root: string, files: string[], outdir: string): Promise<string[]>;
