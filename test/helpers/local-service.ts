/** `npm start`'s process (`tsx local/start.ts`) as a child of the test, and a kill -9 of all of it. */
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { commandOf, descendants, processTable } from './processes.js';

const REPO = join(import.meta.dirname, '..', '..');

export interface Service {
  child: ChildProcess;
  baseUrl: string;
  token: string;
  output: () => string;
}

/** Variables of the test process that must not leak into the service it starts. */
const OWN = ['TABLE_NAME', 'CONTROL_TABLE_NAME', 'DYNAMODB_ENDPOINT', 'DELIVERY_QUEUE_URL', 'AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL_S3', 'IMPORTS_BUCKET', 'IMPORTS_QUEUE_URL', 'CRM_DEV_TOKENS', 'CRM_DATA_DIR', 'LOG_LEVEL', 'POWERTOOLS_LOG_LEVEL', 'VITEST_POOL_ID', 'VITEST_WORKER_ID'];

/**
 * Starts local mode in its own process group (like a shell job) and waits for its token line. It
 * listens on a port the system picks (`PORT=0`; the address is read from its `ready at` line), so
 * no other process can take the port between a pick and the listen.
 */
export async function startService(env: Record<string, string> = {}): Promise<Service> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !OWN.includes(k)));
  const child = spawn(join(REPO, 'node_modules', '.bin', 'tsx'), ['local/start.ts'], {
    cwd: REPO,
    env: { ...inherited, PORT: '0', SMTP_PORT: '0', LOG_LEVEL: 'warn', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const deadline = Date.now() + 90_000;
  while (!/token for account .*: (\S+)/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`local service did not get ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const baseUrl = /CRM API ready at (http:\/\/[^/\s]+)\/api/.exec(output)?.[1];
  if (!baseUrl) throw new Error(`local service printed no address:\n${output}`);
  return { child, baseUrl, token: /token for account .*: (\S+)/.exec(output)![1]!, output: () => output };
}

/**
 * kill -9 of the service's process group AND of DynamoDB Local's Java process (which runs in a
 * group of its own), at the same moment; resolves once every process of the tree is gone.
 */
export async function crash(service: Service): Promise<void> {
  const pids = descendants(service.child.pid!);
  const java = pids.filter((pid) => commandOf(pid).startsWith('java '));
  for (const target of [-service.child.pid!, ...java, ...pids]) {
    try {
      process.kill(target, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  const deadline = Date.now() + 20_000;
  for (;;) {
    const alive = processTable();
    if (pids.every((pid) => !alive.has(pid))) return;
    if (Date.now() > deadline) throw new Error('the service did not exit after kill -9');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** One API call to the service, with its first token or `token` (another account's, CRM_DEV_TOKENS). */
export async function call<T>(service: Service, op: string, body: unknown, token = service.token): Promise<{ status: number; body: { ok: boolean; result: T; error?: { code: string; message: string } } }> {
  const res = await fetch(`${service.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as { ok: boolean; result: T; error?: { code: string; message: string } } };
}
