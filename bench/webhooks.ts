import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { LocalStack } from '../local/runtime.js';
import { percentile } from './stats.js';

/**
 * `events` contact writes through the API at a steady `ratePerSecond`, to a verifying receiver on
 * 127.0.0.1: write start → receipt latency, delivery throughput, lost (never received within 30 s
 * of the last write) and duplicates (same webhook-id received twice). The rate is fixed because
 * locally every stage shares one DynamoDB Local: writing as fast as possible would measure
 * queueing behind it rather than the pipeline's latency.
 */
export async function benchWebhooks(stack: LocalStack, events: number, ratePerSecond = 10): Promise<Record<string, unknown>> {
  const token = stack.tokens[0]!.token;
  const call = async (op: string, body: unknown) => {
    const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const json = (await res.json()) as { ok: boolean; result: Record<string, unknown> };
    if (!json.ok) throw new Error(`${op}: ${JSON.stringify(json)}`);
    return json.result;
  };
  let secret = '';
  const started = new Map<string, number>();
  const latencies: number[] = [];
  const seenIds = new Set<string>();
  let duplicates = 0;
  let unverified = 0;
  let lastReceipt = 0;
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      try {
        const payload = new Webhook(secret).verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>) as { data: { first_name: string } };
        const id = String(req.headers['webhook-id']);
        if (seenIds.has(id)) duplicates++;
        else {
          seenIds.add(id);
          const t0 = started.get(payload.data.first_name);
          if (t0 !== undefined) latencies.push(at - t0);
          lastReceipt = at;
        }
      } catch {
        unverified++;
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  try {
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    secret = String((await call('webhooks-create', { url, events: ['contact.created'] })).signing_secret);
    const t0 = performance.now();
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < events; i++) {
      const due = t0 + (i * 1000) / ratePerSecond;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const name = `wh-bench-${i}`;
      started.set(name, performance.now());
      writes.push(call('contacts-create', { first_name: name }));
    }
    await Promise.all(writes);
    const deadline = performance.now() + 30_000;
    while (seenIds.size < events && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return {
      events,
      write_rate_per_s: ratePerSecond,
      p50_ms: percentile(latencies, 50),
      p99_ms: percentile(latencies, 99),
      throughput_per_s: Math.round((seenIds.size / ((lastReceipt - t0) / 1000)) * 10) / 10,
      lost: events - seenIds.size,
      duplicates,
      unverified,
    };
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }
}
