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
