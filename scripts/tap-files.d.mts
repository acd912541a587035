export interface TapCounts {
  total: number;
  pass: number;
  fail: number;
  skip: number;
  todo: number;
}

export function fileCounts(text: string): TapCounts | null;

export function runTapFiles(options: {
  files: { name: string; path: string }[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  nodeArgs?: string[];
  jobs: number;
  timeoutS: number;
  grep?: string[];
  bail?: boolean;
  write(text: string): void;
}): Promise<{ totals: TapCounts; failed: string[]; interrupted: boolean; times: { name: string; ms: number }[] }>;
