/**
 * The running local server's address, for the project's tools (`npm run token`, `npm run seed`):
 * `npm start` writes `.crm-local.json` at the project's root (gitignored; `CRM_STATE_FILE`
 * names another path) when it is ready and removes it when it stops. A file left by a crashed
 * server names a process that is gone, and is ignored.
 */
import { chmodSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface LocalState {
  pid: number;
  baseUrl: string;
  dynamoEndpoint: string;
  tableName: string;
  dataDir: string | null;
  /** The dev tokens it printed (local, loopback-only credentials: the file is mode 0600). */
  tokens: Array<{ accountId: string; userId: string; token: string }>;
  startedAt: string;
}

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

export const stateFilePath = () => process.env.CRM_STATE_FILE || join(ROOT, '.crm-local.json');

export function writeLocalState(state: LocalState): void {
  const file = stateFilePath();
  const scratch = `${file}.${process.pid}.tmp`;
  writeFileSync(scratch, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  chmodSync(scratch, 0o600);
  renameSync(scratch, file);
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The state of a running local server, or undefined (no file, or its process is gone). */
export function readLocalState(): LocalState | undefined {
  let state: LocalState;
  try {
    state = JSON.parse(readFileSync(stateFilePath(), 'utf8')) as LocalState;
  } catch {
    return undefined;
  }
  return Number.isInteger(state.pid) && alive(state.pid) ? state : undefined;
}

/** Removes the file if this process wrote it (another server may have replaced it since). */
export function removeLocalState(pid = process.pid): void {
  try {
    const state = JSON.parse(readFileSync(stateFilePath(), 'utf8')) as LocalState;
    if (state.pid === pid) rmSync(stateFilePath(), { force: true });
  } catch {
    // none, or not ours
  }
}
