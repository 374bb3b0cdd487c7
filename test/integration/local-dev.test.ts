/**
 * Local conveniences (issue 24, "The first hour" 5): `npm run dev` restarts `npm start` on a code
 * change, keeping the data (CRM_DATA_DIR), the printed token, and one DynamoDB Local; `npm run
 * token` finds the running server without --endpoint.
 */
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { commandOf, descendants, processTable } from '../helpers/processes.js';

const REPO = join(import.meta.dirname, '..', '..');
/** What the test process carries that must not reach the tools (they would think of AWS or of the test's table). */
const OWN = ['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'DELIVERY_QUEUE_URL', 'AWS_ENDPOINT_URL_SQS', 'AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'CRM_DEV_TOKENS', 'CRM_DATA_DIR', 'LOG_LEVEL', 'POWERTOOLS_LOG_LEVEL', 'CURSOR_SECRET', 'VITEST_POOL_ID', 'VITEST_WORKER_ID'];
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !OWN.includes(k))) as Record<string, string>;
const dataDir = mkdtempSync(join(tmpdir(), 'crm-dev-'));
const touched = join(REPO, 'local', `.tmp-dev-restart-${randomUUID()}.ts`);
const javaOf = () => [...processTable().keys()].filter((pid) => commandOf(pid).startsWith('java ') && commandOf(pid).includes(dataDir));

describe('npm run dev and npm run token', async () => {
  // A port the system picks at each (re)start (`PORT=0`): the service's latest `ready at` line says which.
  const child = spawn('npm', ['run', 'dev'], { cwd: REPO, env: { ...env, PORT: '0', SMTP_PORT: '0', CRM_DATA_DIR: dataDir, LOG_LEVEL: 'warn' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += String(d)));
  child.stderr.on('data', (d) => (output += String(d)));
  const tokens = () => [...output.matchAll(/token for account .*: (\S+)/g)].map((m) => m[1]!);
  const baseUrl = () => [...output.matchAll(/CRM API ready at (http:\/\/[^/\s]+)\/api/g)].at(-1)?.[1] ?? '';
  const waitForTokens = async (n: number) => {
    const deadline = Date.now() + 90_000;
    while (tokens().length < n) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`not ready (${n}):\n${output}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const call = async (token: string, op: string, body: unknown) => {
    const res = await fetch(`${baseUrl()}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as { result?: { id?: string } } };
  };
  afterAll(async () => {
    const tree = descendants(child.pid!);
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone
    }
    for (const pid of [...tree, ...javaOf()]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    rmSync(touched, { force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('restarts on a code change with the same data, token and a single DynamoDB Local; npm run token finds it', { timeout: 180_000 }, async () => {
    await waitForTokens(1);
    const [devToken] = tokens();
    expect(existsSync(process.env.CRM_STATE_FILE!)).toBe(true);

    // npm run token without --endpoint: the running server's table, the dev token's account.
    const issued = await promisify(execFile)('npm', ['run', '--silent', 'token', '--', 'create', '--name', 'from the test'], { cwd: REPO, env });
    const adminToken = issued.stdout.trim();
    expect(issued.stderr).toMatch(new RegExp(`local server ${baseUrl()}`));
    expect(adminToken).toMatch(/^crm_/);

    const contact = await call(devToken!, 'contacts-create', { first_name: 'Kept', last_name: 'Across Restarts' });
    expect(contact.status).toBe(200);
    expect((await call(adminToken, 'contacts-get', { id: contact.body.result!.id })).status).toBe(200);
    expect(javaOf()).toHaveLength(1);

    // A code change (a new file under local/): npm start stops cleanly and starts again.
    writeFileSync(touched, '// npm run dev test: a code change\n');
    await waitForTokens(2);
    expect(output).toContain('SIGTERM: stopping…');
    expect(output).toMatch(/^stopped$/m);
    expect(tokens()[1]).toBe(devToken);
    expect((await call(devToken!, 'contacts-get', { id: contact.body.result!.id })).status).toBe(200);
    expect((await call(adminToken, 'contacts-list', {})).status).toBe(200);
    expect(javaOf()).toHaveLength(1);

    // Ctrl-C / SIGTERM of the group: everything ends, the state file goes.
    process.kill(-child.pid!, 'SIGTERM');
    const deadline = Date.now() + 30_000;
    while ((child.exitCode === null || javaOf().length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(javaOf()).toEqual([]);
    expect(existsSync(process.env.CRM_STATE_FILE!)).toBe(false);

    // Without a running server (and no AWS settings) it says so.
    const none = await promisify(execFile)('npm', ['run', '--silent', 'token', '--', 'revoke', adminToken], { cwd: REPO, env }).catch((e: { stderr: string }) => e);
    expect(none.stderr).toMatch(/no running npm start found/);
  });
});
