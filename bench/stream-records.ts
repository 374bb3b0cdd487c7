/**
 * What one contact create writes, by kind of item, and so what the table's stream carries
 * (docs/performance.md, "Fairness"): every item written to the streamed table is a stream record
 * that the stream's reader reads in order, whoever's it is. On a DynamoDB Local of its own, one
 * ordinary contact (name, email, phone, company name) is created through the API and the stream's
 * records are counted by kind until the stream is idle. What the changes worker derives from them
 * (search entries, the change log) goes to the control table, which has no stream, so the bench
 * reads the stream without running the worker.
 *
 *   npx tsx bench/stream-records.ts
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { DynamoDBRecord } from 'aws-lambda';
import { ensureTable, LOCAL_AWS_ENV, startDynamo } from '../local/dynamo.js';

const dynamo = await startDynamo();
const tableName = `stream-records-${randomUUID()}`;
Object.assign(process.env, LOCAL_AWS_ENV, { DYNAMODB_ENDPOINT: dynamo.endpoint, TABLE_NAME: tableName, CONTROL_TABLE_NAME: `${tableName}-control`, CURSOR_SECRET: 'bench', CRM_RATE_LIMIT: '0', POWERTOOLS_LOG_LEVEL: 'CRITICAL' });
await ensureTable(dynamo.endpoint, tableName);
const { createApiServer } = await import('../local/server.js');
const { startStreamPoller } = await import('../local/stream-poller.js');
const { issueToken } = await import('../shared/auth/tokens.js');

/** The kind of a streamed item, from its key (account and ids left out). */
function kindOf(r: DynamoDBRecord): string {
  const pk = String((r.dynamodb?.Keys as Record<string, { S?: string }> | undefined)?.pk?.S ?? '');
  const sk = String((r.dynamodb?.Keys as Record<string, { S?: string }> | undefined)?.sk?.S ?? '');
  if (/#x#w#/.test(pk)) return 'search entry';
  if (/#n#/.test(pk)) return 'search partition counter';
  if (/#x#/.test(pk)) return 'index entry (lookup, tag, reference)';
  if (/#ev/.test(pk)) return 'change log (entry, copies, marker, head, second)';
  if (sk === 'R') return 'the record';
  return `other (${pk.replace(/^A#[^#]+/, 'A').slice(0, 24)})`;
}

const kinds = new Map<string, number>();
const poller = await startStreamPoller({
  endpoint: dynamo.endpoint,
  tableName,
  intervalMs: 25,
  handler: async (event) => {
    for (const r of event.Records) kinds.set(kindOf(r), (kinds.get(kindOf(r)) ?? 0) + 1);
    return undefined as never;
  },
});
const server = createApiServer();
await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const token = await issueToken({ accountId: randomUUID(), userId: randomUUID() });
const call = async (op: string, body: unknown): Promise<{ id: string }> => {
  const res = await fetch(`${base}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${op}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { result: { id: string } }).result;
};
const settle = () => poller.drain(60_000);

const company = await call('companies-create', { name: 'Acme Corporation' });
await call('contacts-create', { first_name: 'Warm', last_name: 'Up' });
await settle();
kinds.clear();
await call('contacts-create', { first_name: 'Grace', last_name: 'Hopper', email: 'grace.hopper@navy.example', phone: '+1 (555) 123-4567', company_id: company.id });
await settle();
const rows = [...kinds].sort((a, b) => b[1] - a[1]);
console.log(`| item written (one stream record each) | per contact create |\n|---|---|\n${rows.map(([k, n]) => `| ${k} | ${n} |`).join('\n')}\n| **all** | **${rows.reduce((s, [, n]) => s + n, 0)}** |`);
await poller.stop();
server.closeAllConnections();
server.close();
await dynamo.stop();
process.exit(0);
