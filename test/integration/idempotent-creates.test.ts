/**
 * Every operation that creates something honours `Idempotency-Key`, and the declarations say
 * which (`idempotent: true` in the resource definitions, shared/schemas/resources/): the list of
 * operations below is generated from them, each is called twice with one key through local mode
 * (its functions' IAM policies enforced, local/iam.ts), and the second answer is the first.
 * A new create operation fails here until it is declared idempotent and given a body in BODIES.
 */
import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/runtime.js';
import { startFileStack } from '../helpers/local-stack.js';
import { db } from '../../shared/db/client.js';
import { controlTableName } from '../../shared/db/control.js';
import { idempotencyKeys } from '../../shared/http/idempotency.js';
import { operationName } from '../../shared/schemas/resource.js';
import { RESOURCES } from '../../shared/schemas/resources/index.js';

/** The verbs of operations that create something. */
const CREATING_VERBS = new Set(['create', 'batch-create', 'batch-upsert']);
/** Creates that ignore the key: api-keys-create hands its token out once, never again. */
const NOT_IDEMPOTENT = new Set(['api-keys-create']);

const declared = RESOURCES.flatMap((r) => Object.entries(r.operations).map(([verb, op]) => ({ name: operationName(r, verb), verb, idempotent: op.idempotent === true })));
/** Every operation declared idempotent, from the declarations. */
const IDEMPOTENT = declared.filter((o) => o.idempotent).map((o) => o.name);

let stack: LocalStack;
beforeAll(async () => {
  stack = await startFileStack();
}, 90_000);
afterAll(async () => {
  await stack?.stop();
});

type Answer = { status: number; body: { ok: boolean; result?: Record<string, unknown>; error?: { code: string } } };
async function post(op: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.tokens[0]!.token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}
const unique = () => randomUUID().slice(0, 8);

/**
 * A valid body of each idempotent operation (a function when it needs something made first).
 * Every generated operation must have one: the test below fails for an operation without.
 */
const BODIES: Record<string, () => Promise<Record<string, unknown>> | Record<string, unknown>> = {
  'contacts-create': () => ({ first_name: `Idem ${unique()}` }),
  'contacts-batch-create': () => ({ items: [{ first_name: `Idem ${unique()}` }, { first_name: `Idem ${unique()}` }] }),
  'contacts-batch-upsert': () => ({ items: [{ email: `idem-${unique()}@example.com`, first_name: 'Idem' }] }),
  'companies-create': () => ({ name: `Idem ${unique()}` }),
  'companies-batch-create': () => ({ items: [{ name: `Idem ${unique()}` }] }),
  'companies-batch-upsert': () => ({ items: [{ domain: `idem-${unique()}.example`, name: 'Idem' }] }),
  'sources-create': () => ({ name: `Idem ${unique()}` }),
  'sources-batch-create': () => ({ items: [{ name: `Idem ${unique()}` }] }),
  'projects-create': () => ({ name: `Idem ${unique()}` }),
  'projects-batch-create': () => ({ items: [{ name: `Idem ${unique()}` }] }),
  'activities-create': () => ({ type: 'note', subject: `Idem ${unique()}` }),
  'activities-batch-create': () => ({ items: [{ type: 'call', subject: `Idem ${unique()}` }] }),
  'custom-fields-create': () => ({ entity_type: 'contact', name: `Idem ${unique()}`, field_type: 'text' }),
  'webhooks-create': () => ({ url: 'http://127.0.0.1:9/idem', events: ['contact.created'] }),
  'imports-create': () => ({ object_type: 'contacts', csv: `first_name\nIdem ${unique()}\n` }),
  'exports-create': () => ({ object_type: 'companies' }),
  'pipelines-create': () => ({ name: `Idem ${unique()}`, stages: [{ name: 'Lead' }, { name: 'Won', kind: 'won' }, { name: 'Lost', kind: 'lost' }] }),
  'members-create': () => ({ email: `idem-${unique()}@example.com`, name: `Idem ${unique()}` }),
  'reassignments-create': async () => {
    const member = await post('members-create', { email: `from-${unique()}@example.com`, name: `From ${unique()}` });
    expect(member.status).toBe(200);
    return { from_owner_id: member.body.result!.id, to_owner_id: null, types: ['contacts'] };
  },
  'erasures-create': async () => {
    const contact = await post('contacts-create', { first_name: 'To erase', email: `erase-${unique()}@example.com` });
    expect(contact.status).toBe(200);
    return { contact_id: contact.body.result!.id, suppress_email: true };
  },
};

describe('Idempotency-Key on every operation that creates something (the declarations\' `idempotent`)', () => {
  it('is declared by every create, batch create and batch upsert but api-keys-create', () => {
    const creating = declared.filter((o) => CREATING_VERBS.has(o.verb)).map((o) => o.name);
    expect(creating.filter((name) => !NOT_IDEMPOTENT.has(name)).sort()).toEqual([...IDEMPOTENT].sort());
    for (const name of NOT_IDEMPOTENT) expect(IDEMPOTENT).not.toContain(name);
    expect(IDEMPOTENT).toEqual(expect.arrayContaining(['contacts-create', 'contacts-batch-create', 'contacts-batch-upsert', 'erasures-create', 'imports-create', 'exports-create', 'webhooks-create', 'custom-fields-create']));
  });

  it('has an example body for every idempotent operation, and for nothing else', () => {
    expect(Object.keys(BODIES).sort()).toEqual([...IDEMPOTENT].sort());
  });

  it.each(IDEMPOTENT)('%s: a retry with the same key and body answers the first result, stored under the key', async (op) => {
    const make = BODIES[op];
    expect(make, `no example body for ${op} in BODIES`).toBeDefined();
    const body = await make!();
    const key = `idem-${op}-${randomUUID()}`;
    const first = await post(op, body, { 'idempotency-key': key });
    expect(first.body.error, `${op}: ${JSON.stringify(first.body)}`).toBeUndefined();
    expect(first.status).toBe(200);
    const second = await post(op, body, { 'idempotency-key': key });
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    const record = (await db().send(new GetCommand({ TableName: controlTableName(), Key: idempotencyKeys.record(stack.tokens[0]!.accountId, op, key) }))).Item;
    expect(record, `${op} stored no idempotency record`).toMatchObject({ status: 'COMPLETED' });
  });

  it('api-keys-create ignores the key: each call hands out a new key and token', async () => {
    const key = `idem-api-keys-${randomUUID()}`;
    const body = { name: `Idem ${unique()}`, scopes: ['contacts:read'] };
    const first = await post('api-keys-create', body, { 'idempotency-key': key });
    const second = await post('api-keys-create', body, { 'idempotency-key': key });
    expect([first.status, second.status]).toEqual([200, 200]);
    const idOf = (a: Answer) => (a.body.result as { api_key: { id: string } }).api_key.id;
    expect(idOf(second)).not.toBe(idOf(first));
    expect(second.body.result!.token).not.toBe(first.body.result!.token);
    expect((await db().send(new GetCommand({ TableName: controlTableName(), Key: idempotencyKeys.record(stack.tokens[0]!.accountId, 'api-keys-create', key) }))).Item).toBeUndefined();
  });
});
