// An operator command as one function of (database, config, arguments) → printed lines and an
// exit code. The same function runs in the CLI on the database file when no service runs, and
// inside the service when the CLI reaches it through the admin socket: same output either way.
import type { CommandIO, CommandRequest } from '../protocol.ts';
import type { Config } from '../../core/config.ts';
import type { Db } from '../../store/db.ts';
import type { IdChange } from '../../core/served-id-changes.ts';
import type { ServedIds } from '../../core/served-ids.ts';

export interface ServiceInfo {
  pid: number;
  started_at: string;
  url: string;
  admin_socket: string | null;
}

/** What the serving process adds to a command run inside it. */
export interface ServiceHooks {
  info(): ServiceInfo;
  /** drops the key from the API's cache at once */
  keyRevoked(keyId: string): void;
  /** swaps the imported schedule into the pipeline and re-expands scheduled trips */
  scheduleImported(scheduleId: string): Promise<void>;
  /** re-reads the config file and applies what can change live */
  reload(): Promise<ReloadOutcome>;
  /** the served ids in force (core/served-ids.ts): what an import compares with */
  servedIds?(): ServedIds;
}

export interface ReloadOutcome {
  /** false: the file was refused and the running config kept */
  applied: boolean;
  file: string | null;
  problems: string[];
  feeds: { added: string[]; changed: string[]; removed: string[] };
  schedules: { added: string[]; changed: string[]; removed: string[] };
  /** changed settings that take effect only after a restart (port, db_path …) */
  needs_restart: string[];
  /** feeds or schedules that could not be applied (a schedule whose import failed) */
  failed: string[];
  /** served ids the reload changed (schedules sharing ids, prefixes, feeds' schedules) */
  ids: IdChange[];
}

export interface OperationContext {
  db: Db;
  config: Readonly<Config>;
  /** present when the command runs inside the service */
  service?: ServiceHooks;
  /** a terminal for progress bars (the CLI on its own file only) */
  progress?: NodeJS.WriteStream;
}

export interface Operation {
  /** runs only inside a service (reload): without one the CLI says so and exits 1 */
  serviceOnly?: boolean;
  /**
   * true when this request may create the database where none exists (a first key, a first
   * schedule); every other command fails on a missing file rather than leave an empty one there
   */
  createsDatabase?(request: CommandRequest): boolean;
  /** argument checks that need no database: the CLI runs them before it looks for one */
  check?(request: CommandRequest): void;
  run(ctx: OperationContext, request: CommandRequest, io: CommandIO): Promise<number>;
}

export type { CommandIO, CommandRequest };
