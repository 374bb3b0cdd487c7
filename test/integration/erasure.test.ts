/**
 * Erasure of a person (contract §18) against the local stack: a contact with a history (updates,
 * an idempotent create, an activity of its own and one shared with a company) is erased; its
 * canary appears in no answer afterwards, the change log keeps ids and names only, the erasure
 * completes once and a second request returns it.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../local/runtime.js';
import { runErasure } from '../../shared/erasures/worker.js';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ smtpPort: 0 });
}, 90_000);
afterAll(async () => {
  await stack?.stop();
});

type Answer<T> = { ok: boolean; result: T; error?: { code: string } };
const raw = async <T>(op: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer<T>> => {
  const res = await fetch(`${stack.baseUrl}/api/${op}`, { method: 'POST', headers: { authorization: `Bearer ${stack.tokens[0]!.token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return (await res.json()) as Answer<T>;
};
const call = async <T = Record<string, unknown>>(op: string, body: unknown, headers: Record<string, string> = {}) => {
  const json = await raw<T>(op, body, headers);
  expect(json.ok, `${op}: ${JSON.stringify(json)}`).toBe(true);
  return json.result;
};
const until = async <T>(what: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 100));
  }
};

describe('erasures (contract §18)', () => {
  it('erases a contact and every copy of its canary; erasing again returns the first erasure', async () => {
    const canary = `canary${randomUUID().slice(0, 8)}`;
    const key = randomUUID();
    const contact = await call<{ id: string }>(
      'contacts-create',
      { first_name: canary, last_name: canary, email: `${canary}@example.com`, phone: canary, job_title: canary, address: canary, city: canary, notes: canary, tags: [canary] },
      { 'idempotency-key': key },
    );
    await call('contacts-update', { id: contact.id, notes: `${canary} again`, city: `${canary}-city` });
    const company = await call<{ id: string }>('companies-create', { name: 'Erasure Co' });
    const own = await call<{ id: string }>('activities-create', { type: 'note', subject: 'only the contact', contact_ids: [contact.id] });
    const shared = await call<{ id: string }>('activities-create', { type: 'note', subject: 'shared', contact_ids: [contact.id], company_id: company.id });
    // The history is logged before the erasure.
    await until(async () => ((await call<{ items: unknown[] }>('events-list', { record_id: contact.id })).items.length >= 2 ? true : undefined));

    const erasure = await call<{ id: string; status: string }>('erasures-create', { contact_id: contact.id });
    expect(erasure.status).toBe('pending');
    const done = await until(async () => {
      const e = await call<{ status: string; removed: Record<string, number>; completed_at: string | null }>('erasures-get', { id: erasure.id });
      return e.status === 'completed' ? e : undefined;
    });
    expect(done.completed_at).not.toBeNull();
    expect(done.removed.records).toBe(1);
    expect(done.removed.activities).toBe(1);
    expect(done.removed.events).toBeGreaterThanOrEqual(2);
    expect(done.removed.idempotent_answers).toBe(1);

    expect((await raw('contacts-get', { id: contact.id })).error?.code).toBe('contacts.not_found');
    expect((await raw('activities-get', { id: own.id })).error?.code).toBe('activities.not_found');
    // The shared activity stays; the stream's cascade takes the contact out of it.
    await until(async () => ((await call<{ contact_ids: string[] }>('activities-get', { id: shared.id })).contact_ids.length === 0 ? true : undefined));

    const history = await call<{ items: Array<{ event: string; data: unknown; record_id: string }> }>('events-list', { record_id: contact.id });
    expect(JSON.stringify(history)).not.toContain(canary);
    for (const e of history.items) expect(e.data).toEqual({ id: contact.id });
    const erased = await until(async () => (await call<{ items: Array<{ event: string; data: unknown }> }>('events-list', { types: ['contact.erased'] })).items.find((e) => (e.data as { id: string }).id === contact.id));
    expect(erased.data).toEqual({ id: contact.id });
    const all = await call<{ items: unknown[] }>('events-list', { limit: 100 });
    expect(JSON.stringify(all)).not.toContain(canary);
    expect(JSON.stringify(await call('contacts-list', { search: canary }))).not.toContain(canary);
    expect(JSON.stringify(await call('trash-list', {}))).not.toContain(canary);

    // A replay of the idempotent create answers not_found (it must not create the contact again).
    const replay = await raw('contacts-create', { first_name: canary, last_name: canary, email: `${canary}@example.com`, phone: canary, job_title: canary, address: canary, city: canary, notes: canary, tags: [canary] }, { 'idempotency-key': key });
    expect(replay.error?.code).toBe('contacts.not_found');

    const again = await call<{ id: string; status: string }>('erasures-create', { contact_id: contact.id });
    expect(again.id).toBe(erasure.id);
    const listed = await call<{ items: Array<{ id: string }> }>('erasures-list', {});
    expect(listed.items.map((e) => e.id)).toContain(erasure.id);
  }, 120_000);

  it('erases a contact in the trash, and refuses an unknown one', async () => {
    const canary = `trashcanary${randomUUID().slice(0, 8)}`;
    const contact = await call<{ id: string }>('contacts-create', { first_name: canary, email: `${canary}@example.com` });
    await call('contacts-delete', { id: contact.id });
    const erasure = await call<{ id: string }>('erasures-create', { contact_id: contact.id });
    await until(async () => ((await call<{ status: string }>('erasures-get', { id: erasure.id })).status === 'completed' ? true : undefined));
    expect(JSON.stringify(await call('trash-list', {}))).not.toContain(canary);
    expect((await raw('contacts-restore', { id: contact.id })).ok).toBe(false);
    expect((await raw('erasures-create', { contact_id: randomUUID() })).error?.code).toBe('erasures.not_found');
    expect((await raw('erasures-create', { contact_id: 'nope' })).error?.code).toBe('erasures.invalid_id');
  }, 120_000);

  it('suppresses the email: create, update and batch rows with it are refused, in any case', async () => {
    const email = `supp${randomUUID().slice(0, 8)}@example.com`;
    const contact = await call<{ id: string }>('contacts-create', { first_name: 'Sup', email });
    const erasure = await call<{ id: string; suppress_email: boolean }>('erasures-create', { contact_id: contact.id, suppress_email: true });
    expect(erasure.suppress_email).toBe(true);
    expect((await raw('contacts-create', { first_name: 'Again', email: email.toUpperCase() })).error?.code).toBe('contacts.email_suppressed');
    const other = await call<{ id: string }>('contacts-create', { first_name: 'Other', email: `other${randomUUID().slice(0, 8)}@example.com` });
    expect((await raw('contacts-update', { id: other.id, email })).error?.code).toBe('contacts.email_suppressed');
    const batch = await call<{ results: Array<{ ok: boolean; error?: { code: string } }> }>('contacts-batch-create', { items: [{ first_name: 'B', email }, { first_name: 'C' }] });
    expect(batch.results[0]!.error?.code).toBe('contacts.email_suppressed');
    expect(batch.results[1]!.ok).toBe(true);
  }, 120_000);

  it('resumes a crashed erasure at its saved step: completed once, contact.erased once', async () => {
    // This test drives the worker itself: the stack's erasure worker is stopped (its messages wait).
    await stack.erasures.worker.stop();
    const contact = await call<{ id: string }>('contacts-create', { first_name: 'Crash', email: `crash${randomUUID().slice(0, 8)}@example.com` });
    const erasure = await call<{ id: string }>('erasures-create', { contact_id: contact.id });
    const message = { account_id: stack.tokens[0]!.accountId, erasure_id: erasure.id };
    await expect(runErasure(message, { leaseMs: 1, afterStep: (step) => { if (step === 'records') throw new Error('crash'); } })).rejects.toThrow('crash');
    const mid = await call<{ status: string; removed: { records: number } }>('erasures-get', { id: erasure.id });
    expect(mid.status).toBe('pending');
    expect(mid.removed.records).toBe(1);
    expect(await runErasure(message)).toBe('completed');
    expect(await runErasure(message)).toBe('skipped');
    const done = await call<{ status: string; removed: { records: number } }>('erasures-get', { id: erasure.id });
    expect(done).toMatchObject({ status: 'completed', removed: { records: 1 } });
    const erased = (await call<{ items: Array<{ data: { id: string } }> }>('events-list', { types: ['contact.erased'], limit: 100 })).items.filter((e) => e.data.id === contact.id);
    expect(erased).toHaveLength(1);
  }, 120_000);
});
