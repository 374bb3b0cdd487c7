import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../../local/dynamo.js';
import { commandOf, descendants, processTable } from '../helpers/processes.js';

/**
 * `npm start` as a user runs it: every service it starts listens on loopback only, and every
 * way of stopping it (SIGTERM to npm, Ctrl-C to the terminal's process group, SIGHUP to npm)
 * stops the whole process tree, DynamoDB Local's Java process included, without error output.
 */
const REPO = join(import.meta.dirname, '..', '..');

interface Started {
  child: ChildProcess;
  port: number;
  output: () => string;
  token: string;
}

/** Every process of every started tree, to clean up after a failed test. */
const running: number[] = [];

async function startNpm(env: Record<string, string> = {}): Promise<Started> {
  const port = await freePort();
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['TABLE_NAME', 'DYNAMODB_ENDPOINT', 'DELIVERY_QUEUE_URL', 'AWS_ENDPOINT_URL_SQS', 'CRM_DEV_TOKENS', 'CRM_DATA_DIR', 'LOG_LEVEL', 'POWERTOOLS_LOG_LEVEL', 'CURSOR_SECRET'].includes(k)));
  // Its own process group, like a shell job: a "Ctrl-C" is a SIGINT to that group.
  const child = spawn('npm', ['start'], { cwd: REPO, env: { ...base, PORT: String(port), SMTP_PORT: '0', ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => (output += String(d)));
  child.stderr!.on('data', (d) => (output += String(d)));
  const deadline = Date.now() + 90_000;
  while (!/token for account .*: (\S+)/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`npm start did not get ready:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  running.push(...descendants(child.pid!));
  return { child, port, output: () => output, token: /token for account .*: (\S+)/.exec(output)![1]! };
}

afterEach(() => {
  // A failed test must not leave its stack running.
  const alive = processTable();
  for (const pid of running.splice(0)) {
    if (!alive.has(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});



/** `0100007F:0BB8` (/proc/net/tcp) or the 32-hex-digit IPv6 form → address and port. */
function decode(hex: string): { address: string; port: number } {
  const [addr, port] = hex.split(':') as [string, string];
  const words = addr.match(/.{8}/g)!.map((w) => w.match(/../g)!.reverse().join(''));
  if (addr.length === 8) return { address: words[0]!.match(/../g)!.map((b) => parseInt(b, 16)).join('.'), port: parseInt(port, 16) };
  const groups = words.join('').match(/.{4}/g)!.map((g) => parseInt(g, 16).toString(16));
  const full = groups.join(':');
  // ::ffff:a.b.c.d (an IPv4 address on an IPv6 socket)
  if (full.startsWith('0:0:0:0:0:ffff:')) {
    const v4 = words[3]!.match(/../g)!.map((b) => parseInt(b, 16)).join('.');
    return { address: `::ffff:${v4}`, port: parseInt(port, 16) };
  }
  return { address: full === '0:0:0:0:0:0:0:1' ? '::1' : full === '0:0:0:0:0:0:0:0' ? '::' : full, port: parseInt(port, 16) };
}

const isLoopback = (address: string) => /^127\./.test(address) || address === '::1' || /^::ffff:127\./.test(address);

/** Every listening TCP socket held by one of these processes (sockets matched by inode). */
function listeningSockets(pids: number[]): { pid: number; address: string; port: number }[] {
  const listening = new Map<string, { address: string; port: number }>();
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue; // 0A = LISTEN
      listening.set(f[9]!, decode(f[1]!));
    }
  }
  const out: { pid: number; address: string; port: number }[] = [];
  for (const pid of pids) {
    let fds: string[] = [];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let target = '';
      try {
        target = readlinkSync(`/proc/${pid}/fd/${fd}`);
      } catch {
        continue;
      }
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      const socket = inode ? listening.get(inode) : undefined;
      if (socket) out.push({ pid, ...socket });
    }
  }
  return out;
}

const portOpen = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

async function waitGone(pids: number[], timeoutMs = 20_000): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const table = processTable();
    const alive = pids.filter((pid) => table.has(pid));
    if (alive.length === 0 || Date.now() > deadline) return alive;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** What must never be printed while starting, serving and stopping. */
const NOISE = /ECONNREFUSED|\n\s+at |Error:|Warning|EBADENGINE/;

describe('npm start', () => {
  it('refuses a bad CRM_DEV_TOKENS entry with a clear line and exit code 2, no stack trace', async () => {
    const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['CRM_DEV_TOKENS', 'CRM_DATA_DIR'].includes(k)));
    for (const value of ['not-a-pair', 'short=00000000-0000-4000-8000-000000000001:00000000-0000-4000-8000-000000000002']) {
      const child = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], { cwd: REPO, env: { ...base, PORT: '0', SMTP_PORT: '0', CRM_DEV_TOKENS: value }, stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
      child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code).toBe(2);
      expect(output).toMatch(/^CRM_DEV_TOKENS /);
      expect(output).not.toMatch(NOISE);
    }
  });

  it('listens on 127.0.0.1 only, logs one line per request, and stops everything (Java included) on SIGTERM to npm', async () => {
    const started = await startNpm();
    const tree = descendants(started.child.pid!);
    expect(tree.some((pid) => commandOf(pid).startsWith('java '))).toBe(true);
    const sockets = listeningSockets(tree);
    // The API, DynamoDB Local and the queue at least.
    expect(sockets.length).toBeGreaterThanOrEqual(3);
    expect(sockets.map((s) => s.port)).toContain(started.port);
    expect(sockets.filter((s) => !isLoopback(s.address))).toEqual([]);

    const res = await fetch(`http://127.0.0.1:${started.port}/api/contacts-get`, {
      method: 'POST',
      headers: { authorization: `Bearer ${started.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: '00000000-0000-4000-8000-0000000000aa' }),
    });
    const body = (await res.json()) as { error: { code: string; request_id: string } };
    expect(res.status).toBe(404);
    expect(body.error.request_id).toBe(res.headers.get('apigw-requestid'));
    const line = `POST contacts-get 404 `;
    const deadline = Date.now() + 5_000;
    while (!started.output().includes(line) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(started.output()).toMatch(new RegExp(`POST contacts-get 404 \\d+ ms \\(request ${body.error.request_id}\\)`));

    // A webhook endpoint where nothing listens: the first attempt fails and npm start says so.
    const call = (op: string, payload: unknown) =>
      fetch(`http://127.0.0.1:${started.port}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${started.token}`, 'content-type': 'application/json' }, body: JSON.stringify(payload) });
    const closed = await freePort();
    expect((await call('webhooks-create', { url: `http://127.0.0.1:${closed}/hook`, events: ['contact.created'] })).status).toBe(200);
    expect((await call('contacts-create', { first_name: 'Ada' })).status).toBe(200);
    const attemptDeadline = Date.now() + 20_000;
    while (!started.output().includes('webhook attempt failed') && Date.now() < attemptDeadline) await new Promise((r) => setTimeout(r, 100));
    expect(started.output()).toMatch(/"level":"WARN","message":"webhook attempt failed, retry scheduled"/);

    process.kill(started.child.pid!, 'SIGTERM');
    expect(await waitGone(tree)).toEqual([]);
    expect(await portOpen(started.port)).toBe(false);
    expect(started.output()).toContain('SIGTERM: stopping');
    expect(started.output()).not.toMatch(NOISE);
  }, 120_000);

  it('stops everything quietly on Ctrl-C (SIGINT to the process group); LOG_LEVEL=warn drops request lines', async () => {
    const started = await startNpm({ LOG_LEVEL: 'warn' });
    const tree = descendants(started.child.pid!);
    const res = await fetch(`http://127.0.0.1:${started.port}/api/contacts-list`, {
      method: 'POST',
      headers: { authorization: `Bearer ${started.token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(res.status).toBe(200);
    process.kill(-started.child.pid!, 'SIGINT');
    expect(await waitGone(tree)).toEqual([]);
    expect(await portOpen(started.port)).toBe(false);
    expect(started.output()).not.toContain('POST contacts-list');
    expect(started.output()).not.toMatch(NOISE);
  }, 120_000);

  it('stops everything when npm gets a SIGHUP (which npm does not pass on)', async () => {
    const started = await startNpm();
    const tree = descendants(started.child.pid!);
    process.kill(started.child.pid!, 'SIGHUP');
    expect(await waitGone(tree)).toEqual([]);
    expect(await portOpen(started.port)).toBe(false);
    expect(started.output()).not.toMatch(NOISE);
  }, 120_000);

  it('leaves no Java process behind even when the Node process is killed outright (SIGKILL)', async () => {
    const started = await startNpm();
    const tree = descendants(started.child.pid!);
    const java = tree.filter((pid) => commandOf(pid).startsWith('java '));
    const node = tree.filter((pid) => commandOf(pid).startsWith('node ') || commandOf(pid).includes('local/start.ts'));
    expect(java).toHaveLength(1);
    for (const pid of node) process.kill(pid, 'SIGKILL');
    // DynamoDB Local's launcher exits when its standard input (a pipe from Node) closes.
    expect(await waitGone(java)).toEqual([]);
  }, 120_000);
});

