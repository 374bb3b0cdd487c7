/**
 * Local webhook delivery latency: starts the local stack (DynamoDB Local, stream worker, local
 * queue, delivery worker, API), registers a receiver on 127.0.0.1, makes N contact writes
 * through the HTTP API one after another and measures write → receipt at the receiver.
 *
 *   npx tsx scripts/webhook-latency.ts [writes=100]
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { startLocalStack } from '../local/runtime.js';

const writes = Number(process.argv[2] ?? 100);
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';
process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';

const stack = await startLocalStack({ tableName: `latency-${Date.now()}` });
const token = stack.tokens[0]!.token;
const call = async (op: string, body: unknown) => {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await res.json()) as { ok: boolean; result: Record<string, unknown> };
  if (!json.ok) throw new Error(`${op}: ${JSON.stringify(json)}`);
  return json.result;
};

let secret = '';
const waiting = new Map<string, (at: number) => void>();
let unverified = 0;
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = performance.now();
    const body = Buffer.concat(chunks).toString('utf8');
    try {
      const payload = new Webhook(secret).verify(body, req.headers as Record<string, string>) as { data: { first_name: string } };
      waiting.get(payload.data.first_name)?.(at);
    } catch {
      unverified++;
    }
    res.writeHead(204).end();
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
secret = String((await call('webhooks-create', { url, events: ['contact.created'] })).signing_secret);

const samples: number[] = [];
for (let i = 0; i < writes + 5; i++) {
  const name = `latency-${i}`;
  const received = new Promise<number>((resolve, reject) => {
    waiting.set(name, resolve);
    setTimeout(() => reject(new Error(`${name} not delivered within 10 s`)), 10_000).unref();
  });
  const start = performance.now();
  await call('contacts-create', { first_name: name });
  const at = await received;
  if (i >= 5) samples.push(at - start); // the first few warm up the handlers
}

samples.sort((a, b) => a - b);
const pct = (p: number) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)]!;
console.log(`webhook delivery latency over ${samples.length} writes (write request start → receipt):`);
console.log(`  p50 ${pct(50).toFixed(0)} ms   p90 ${pct(90).toFixed(0)} ms   p99 ${pct(99).toFixed(0)} ms   max ${samples[samples.length - 1]!.toFixed(0)} ms   unverified ${unverified}`);

receiver.closeAllConnections();
receiver.close();
await stack.stop();
process.exit(0);
