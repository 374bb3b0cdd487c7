import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/dynamo.js';

/** docs/webhooks.md's receiver: `npm run receiver` verifies signatures and prints each event. */
const REPO = join(import.meta.dirname, '..', '..');
const secret = `whsec_${randomBytes(24).toString('base64')}`;

describe('npm run receiver', async () => {
  const port = await freePort();
  const child = spawn('npm', ['run', '--silent', 'receiver', '--', '--port', String(port)], {
    cwd: REPO,
    env: { ...process.env, WEBHOOK_SECRET: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d) => (output += String(d)));
  child.stderr.on('data', (d) => (output += String(d)));
  afterAll(async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  });

  const waitFor = async (text: string) => {
    const deadline = Date.now() + 30_000;
    while (!output.includes(text)) {
      if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no "${text}" in:\n${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('accepts a signed delivery, prints it, and rejects a forged one', async () => {
    await waitFor(`listening on http://127.0.0.1:${port}`);
    const id = randomUUID();
    const recordId = randomUUID();
    const body = JSON.stringify({ id, event: 'contact.created', timestamp: new Date().toISOString(), data: { id: recordId } });
    const now = new Date();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, now, body),
    };
    const ok = await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', headers, body });
    expect(ok.status).toBe(204);
    await waitFor(`${id} contact.created ${recordId}`);

    const forged = await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', headers, body: body.replace(recordId, randomUUID()) });
    expect(forged.status).toBe(400);
    await waitFor('rejected POST /hook');
  });
});

/** Starts `npm run receiver` with these arguments; resolves once it listens (or exits). */
function receiver(args: string[], env: Record<string, string> = {}) {
  const child = spawn('npm', ['run', '--silent', 'receiver', '--', ...args], { cwd: REPO, env: { ...process.env, WEBHOOK_SECRET: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += String(d)));
  child.stderr.on('data', (d) => (output += String(d)));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    exited,
    output: () => output,
    async waitFor(text: string) {
      const deadline = Date.now() + 30_000;
      while (!output.includes(text)) {
        if (Date.now() > deadline || child.exitCode !== null) throw new Error(`no "${text}" in:\n${output}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

const signed = (signingSecret: string, recordId = randomUUID()) => {
  const id = randomUUID();
  const body = JSON.stringify({ id, event: 'contact.updated', timestamp: new Date().toISOString(), data: { id: recordId } });
  const now = new Date();
  return { id, body, headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': new Webhook(signingSecret).sign(id, now, body) } };
};

describe('npm run receiver: several secrets and --forward-to', async () => {
  const oldSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const newSecret = `whsec_${randomBytes(24).toString('base64')}`;
  const port = await freePort();
  // The app the receiver forwards to: records what it gets, answers what `answer` says.
  const { createServer } = await import('node:http');
  const got: Array<{ url: string; headers: Record<string, unknown>; body: string }> = [];
  let answer = 202;
  const app = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += String(d)));
    req.on('end', () => {
      got.push({ url: req.url ?? '', headers: req.headers, body });
      res.writeHead(answer).end();
    });
  });
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', () => r()));
  const appPort = (app.address() as { port: number }).port;
  const r = receiver(['--port', String(port), '--secret', newSecret, '--secret', oldSecret, '--forward-to', `http://127.0.0.1:${appPort}/webhooks`]);
  afterAll(async () => {
    await r.stop();
    app.closeAllConnections();
    await new Promise((done) => app.close(done));
  });

  it('verifies with any of its secrets, forwards the raw delivery and answers with the app status', async () => {
    await r.waitFor(`listening on http://127.0.0.1:${port}/hook (verifying signatures with 2 secrets; forwarding verified events to http://127.0.0.1:${appPort}/webhooks)`);
    for (const secret of [oldSecret, newSecret]) {
      const d = signed(secret);
      const res = await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', headers: d.headers, body: d.body });
      expect(res.status).toBe(202);
      const forwarded = got.find((g) => g.headers['webhook-id'] === d.id);
      expect(forwarded).toMatchObject({ url: '/webhooks', body: d.body, headers: { 'webhook-signature': d.headers['webhook-signature'], 'webhook-timestamp': d.headers['webhook-timestamp'] } });
      await r.waitFor(`${d.id} contact.updated`);
      await r.waitFor(`(secret ${secret.slice(0, 10)}…) → 202 (forwarded to http://127.0.0.1:${appPort}/webhooks: 202)`);
    }
    // A secret it does not hold: rejected, never forwarded.
    const foreign = signed(`whsec_${randomBytes(24).toString('base64')}`);
    expect((await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', headers: foreign.headers, body: foreign.body })).status).toBe(400);
    expect(got.some((g) => g.headers['webhook-id'] === foreign.id)).toBe(false);
    // The app's failures reach the service (so it retries), and an app that is down is a 502.
    answer = 500;
    const failing = signed(newSecret);
    expect((await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', headers: failing.headers, body: failing.body })).status).toBe(500);
    app.closeAllConnections();
    await new Promise((done) => app.close(done));
    const down = signed(newSecret);
    expect((await fetch(`http://127.0.0.1:${port}/hook`, { method: 'POST', headers: down.headers, body: down.body })).status).toBe(502);
    await r.waitFor('failed (ECONNREFUSED)');
  });

  it('takes comma-separated secrets from WEBHOOK_SECRET, and refuses to forward off this machine', async () => {
    const otherPort = await freePort();
    const env = receiver(['--port', String(otherPort)], { WEBHOOK_SECRET: `${newSecret},${oldSecret}` });
    try {
      await env.waitFor('with 2 secrets; answering 204');
      const d = signed(oldSecret);
      expect((await fetch(`http://127.0.0.1:${otherPort}/hook`, { method: 'POST', headers: d.headers, body: d.body })).status).toBe(204);
    } finally {
      await env.stop();
    }
    const remote = receiver(['--port', String(otherPort), '--secret', newSecret, '--forward-to', 'http://example.com/hook']);
    expect(await remote.exited).toBe(2);
    expect(remote.output()).toMatch(/--forward-to must be an http\(s\) URL on this machine/);
  });
});
