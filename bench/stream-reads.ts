/**
 * Stream records and stream-function invocations per 1,000 reads (docs/deploy.md, "Local mode
 * is the deployment's twin"): on a DynamoDB Local of its own, one account with an API key and
 * the rate limiter on, `READS` reads (contacts-get and contacts-list, 10 at a time) through the
 * local API server, the table's stream read by the local stream poller (counting what it reads:
 * reads write nothing to the streamed table, so no handler work is needed). Prints the records and invocations seen during the reads as JSON.
 *
 *   npx tsx bench/stream-reads.ts [reads=1000]
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { ensureTable, LOCAL_AWS_ENV, startDynamo } from '../local/dynamo.js';

const READS = Number(process.argv[2] ?? 1000);
const dynamo = await startDynamo();
const tableName = `stream-reads-${randomUUID()}`;
Object.assign(process.env, LOCAL_AWS_ENV, {
  DYNAMODB_ENDPOINT: dynamo.endpoint,
  TABLE_NAME: tableName,
  CONTROL_TABLE_NAME: `${tableName}-control`,
  CURSOR_SECRET: 'bench',
  CRM_RATE_LIMIT: '1000,1000',
  POWERTOOLS_LOG_LEVEL: 'CRITICAL',
});
await ensureTable(dynamo.endpoint, tableName);

const { createApiServer } = await import('../local/server.js');
const { startStreamPoller } = await import('../local/stream-poller.js');
const { issueToken } = await import('../shared/auth/tokens.js');

let records = 0;
let invocations = 0;
const poller = await startStreamPoller({
  endpoint: dynamo.endpoint,
  tableName,
  intervalMs: 25,
  handler: async (event) => {
    records += event.Records.length;
    invocations += 1;
    return undefined as never;
  },
});

const server = createApiServer();
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const token = await issueToken({ accountId: randomUUID(), userId: randomUUID() });
let limited = 0;
const call = async (op: string, body: unknown) => {
  const res = await fetch(`${base}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const out = (await res.json()) as { ok: boolean; result?: { id: string } };
  // A 429 counted the call as well (the limiter wrote its bucket): it is a read like the others here.
  if (res.status === 429) limited += 1;
  else if (!out.ok) throw new Error(`${op}: ${res.status} ${JSON.stringify(out)}`);
  return out.result;
};

const contact = await call('contacts-create', { first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com' });
await poller.drain(60_000);
records = 0;
invocations = 0;

const started = Date.now();
let next = 0;
await Promise.all(
  Array.from({ length: 10 }, async () => {
    while (next < READS) {
      const i = next++;
      await (i % 2 === 0 ? call('contacts-get', { id: contact!.id }) : call('contacts-list', { limit: 10 }));
    }
  }),
);
await poller.drain(60_000);
// Records of the last writes may still be on their way: give the poller a few more rounds.
await new Promise((r) => setTimeout(r, 1_000));
await poller.drain(60_000);

console.log(JSON.stringify({ reads: READS, rateLimited: limited, streamRecords: records, streamInvocations: invocations, perThousandReads: { records: (records * 1000) / READS, invocations: (invocations * 1000) / READS }, seconds: (Date.now() - started) / 1000 }));
await poller.stop();
server.closeAllConnections();
server.close();
await dynamo.stop();
process.exit(0);
