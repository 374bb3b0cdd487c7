/**
 * Erasure of a person (contract §18) against the local stack. A contact with a full history
 * (updates, an idempotent create, a custom field, activities, a project, inbound emails from and
 * to it, webhook deliveries to two endpoints, an import with an error row holding its email, an
 * export holding it) carries a canary in every field; afterwards the canary is in no answer,
 * download, stored file or raw mail, and what the receiver gets after the erasure (pending
 * deliveries, resend, recover, replay) carries ids and names only.
 */
import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/runtime.js';
import { startFileStack } from '../helpers/local-stack.js';
import { runErasure } from '../../shared/erasures/worker.js';
import { Receiver, reply } from '../helpers/webhook-harness.js';

let stack: LocalStack;
let receiver: Receiver;
beforeAll(async () => {
  // One retry at once: the failing endpoint's delivery is `failed` in a second (for webhooks-recover).
  process.env.WEBHOOK_RETRY_DELAYS = '0';
  receiver = await new Receiver().on('/fail', reply(500)).start();
  stack = await startFileStack();
}, 90_000);
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
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
const until = async <T>(what: () => Promise<T | undefined>, timeoutMs = 60_000, label = 'condition'): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await what();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${label}`);
    await new Promise((r) => setTimeout(r, 100));
  }
};
const completed = (id: string) =>
  until(async () => {
    const e = await call<{ status: string; removed: Record<string, number>; completed_at: string | null }>('erasures-get', { id });
    return e.status === 'completed' ? e : undefined;
  }, 60_000, 'the erasure to complete');

/** Every object of a bucket with its text (the local object store, signed with the local key). */
async function objects(bucket: string): Promise<Array<{ key: string; text: string }>> {
  const s3 = new S3Client({ endpoint: stack.resources.awsEndpoint, forcePathStyle: true, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  try {
    const out: Array<{ key: string; text: string }> = [];
    const listed = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    for (const o of listed.Contents ?? []) {
      const got = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: o.Key! }));
      out.push({ key: o.Key!, text: await got.Body!.transformToString() });
    }
    return out;
  } finally {
    s3.destroy();
  }
}

async function sendMail(message: Record<string, unknown>): Promise<void> {
  const t = nodemailer.createTransport({ host: '127.0.0.1', port: stack.smtp.port, secure: false, ignoreTLS: true });
  try {
    await t.sendMail(message as never);
  } finally {
    t.close();
  }
}

type Rec = Record<string, unknown> & { id: string };
type Delivery = { id: string; event_id: string; event_type: string; status: string };
const deliveries = async (endpointId: string) => (await call<{ deliveries: Delivery[] }>('webhooks-deliveries', { endpoint_id: endpointId, limit: 100 })).deliveries;

describe('erasures (contract §18)', () => {
  it('leaves no copy of a contact with a full history in any answer, download, file, raw mail, delivery or replay', async () => {
    const canary = `canary${randomUUID().slice(0, 8)}`;
    const email = `${canary}@example.com`;
    const start = new Date(Date.now() - 1000).toISOString();
    const has = (x: unknown) => JSON.stringify(x).includes(canary);

    // Two endpoints: one answers 200, one 500 (its deliveries fail, for webhooks-recover).
    const okEndpoint = await call<{ endpoint: { id: string }; signing_secret: string }>('webhooks-create', { url: `${receiver.baseUrl}/ok`, events: ['contact.created', 'contact.updated', 'contact.erased', 'project.updated', 'activity.created'] });
    const failEndpoint = await call<{ endpoint: { id: string } }>('webhooks-create', { url: `${receiver.baseUrl}/fail`, events: ['contact.created'] });
    receiver.secret('/ok', okEndpoint.signing_secret);

    // A canary in every field, a custom field's included; created with an idempotency key.
    const field = await call<Rec>('custom-fields-create', { entity_type: 'contact', name: `Nickname ${randomUUID().slice(0, 6)}`, field_type: 'text' });
    const key = randomUUID();
    const body = { first_name: canary, last_name: canary, email, phone: canary, job_title: canary, address: canary, city: canary, state: canary, zip_code: canary, country: canary, notes: canary, tags: [canary], custom_fields: { [field.id]: canary } };
    const contact = await call<Rec>('contacts-create', body, { 'idempotency-key': key });
    await call('contacts-update', { id: contact.id, notes: `${canary} again`, city: `${canary}-city` });
    const company = await call<Rec>('companies-create', { name: 'Erasure Co' });
    const project = await call<Rec>('projects-create', { name: 'Erasure project', contact_ids: [contact.id] });
    const own = await call<Rec>('activities-create', { type: 'note', subject: `about ${canary}`, body: canary, contact_ids: [contact.id] });
    const shared = await call<Rec>('activities-create', { type: 'note', subject: 'shared', contact_ids: [contact.id], company_id: company.id });

    // Inbound mail from it and to it (cc).
    const inbound = stack.inboundAddresses[0]!.address;
    await sendMail({ from: email, to: inbound, subject: `from ${canary}`, text: `signed ${canary}`, messageId: `<${randomUUID()}@x>` });
    await sendMail({ from: 'someone@else.example', to: inbound, cc: email, subject: `to ${canary}`, text: canary, messageId: `<${randomUUID()}@x>` });
    await until(async () => ((await call<{ items: Rec[] }>('inbound-emails-list', { contact_id: contact.id })).items.length === 2 ? true : undefined), 30_000, 'two inbound emails');

    // An import whose error row holds its email (a row with a cell too many), and an export holding it.
    const imp = await call<Rec>('imports-create', { object_type: 'contacts', csv: `first_name,last_name\nOther,Person\n${canary},${email},extra\n` });
    await until(async () => ((await call<Rec>('imports-get', { id: imp.id })).status === 'completed' ? true : undefined), 30_000, 'the import');
    expect(has(await call('imports-errors', { import_id: imp.id }))).toBe(true);
    expect((await objects(stack.imports.bucket)).some((o) => o.text.includes(canary))).toBe(true);
    const exp = await call<Rec>('exports-create', { object_type: 'contacts' });
    const exported = await until(async () => {
      const e = await call<{ status: string; download_url: string | null }>('exports-get', { id: exp.id });
      return e.status === 'completed' ? e : undefined;
    }, 30_000, 'the export');
    expect(await (await fetch(exported.download_url!)).text()).toContain(canary);

    // Logged and delivered before the erasure (the failing endpoint's delivery failed).
    await until(async () => ((await deliveries(okEndpoint.endpoint.id)).filter((d) => d.status === 'delivered').length >= 4 ? true : undefined), 30_000, 'deliveries');
    await until(async () => ((await deliveries(failEndpoint.endpoint.id)).some((d) => d.status === 'failed') ? true : undefined), 30_000, 'a failed delivery');
    expect(receiver.at('/ok').some((r) => r.body.includes(canary))).toBe(true);
    expect((await objects(stack.resources.buckets.inbound)).some((o) => o.text.includes(canary))).toBe(true);

    const erasure = await call<{ id: string; status: string }>('erasures-create', { contact_id: contact.id });
    expect(erasure.status).toBe('pending');
    const done = await completed(erasure.id);
    const receivedBefore = receiver.received.length;
    expect(done.completed_at).not.toBeNull();
    expect(done.removed).toMatchObject({ records: 1, activities: 3, inbound_emails: 2, exports: 1, import_rows: 2, idempotent_answers: 1 });
    expect(done.removed.events).toBeGreaterThanOrEqual(2);
    expect(done.removed.deliveries).toBeGreaterThanOrEqual(3);

    // Answers.
    expect((await raw('contacts-get', { id: contact.id })).error?.code).toBe('contacts.not_found');
    expect((await raw('activities-get', { id: own.id })).error?.code).toBe('activities.not_found');
    // Links that stay lose the contact by the stream's cascade (`*.updated` events).
    await until(async () => ((await call<{ contact_ids: string[] }>('activities-get', { id: shared.id })).contact_ids.length === 0 ? true : undefined), 30_000, 'the shared activity unlinked');
    await until(async () => ((await call<{ contact_ids: string[] }>('projects-get', { id: project.id })).contact_ids.length === 0 ? true : undefined), 30_000, 'the project unlinked');
    const history = await call<{ items: Array<{ event: string; data: unknown; record_id: string; previous_attributes?: unknown }> }>('events-list', { record_id: contact.id });
    expect(history.items.map((e) => e.event)).toEqual(expect.arrayContaining(['contact.created', 'contact.updated', 'contact.erased']));
    for (const e of history.items) {
      expect(e.data).toEqual({ id: contact.id });
      expect(e.previous_attributes).toBeUndefined();
    }
    const erasedEvents = (await call<{ items: Array<{ data: { id: string } }> }>('events-list', { types: ['contact.erased'], limit: 100 })).items.filter((e) => e.data.id === contact.id);
    expect(erasedEvents).toHaveLength(1);
    const answers = await Promise.all([
      call('events-list', { limit: 100 }),
      call('contacts-list', { search: canary }),
      call('contacts-list', { filter: { field: 'email', op: 'eq', value: email } }),
      call('contacts-list', { tags: [canary] }),
      call('contacts-list', { limit: 100 }),
      call('trash-list', {}),
      call('activities-list', { limit: 100 }),
      call('projects-list', {}),
      call('inbound-emails-list', {}),
      call('imports-errors', { import_id: imp.id }),
      call('webhooks-deliveries', { endpoint_id: okEndpoint.endpoint.id, limit: 100 }),
      call('webhooks-deliveries', { endpoint_id: failEndpoint.endpoint.id, limit: 100 }),
    ]);
    for (const [i, a] of answers.entries()) expect(has(a), `answer ${i}: ${JSON.stringify(a)}`).toBe(false);
    // The idempotent create's stored answer: a replay answers not_found (and creates nothing).
    expect((await raw('contacts-create', body, { 'idempotency-key': key })).error?.code).toBe('contacts.not_found');

    // Downloads and stored files: the export expired, its file gone; the import's file gone; the raw mail gone.
    const expired = await call<{ status: string; download_url: string | null }>('exports-get', { id: exp.id });
    expect(expired).toMatchObject({ status: 'expired', download_url: null });
    expect((await fetch(exported.download_url!)).status).toBe(404);
    for (const bucket of new Set([stack.imports.bucket, stack.resources.buckets.inbound])) {
      expect((await objects(bucket)).filter((o) => o.text.includes(canary)).map((o) => o.key)).toEqual([]);
    }

    // Sent again after the erasure: resend, recover (the failed delivery), replay. All redacted.
    const created = (await deliveries(okEndpoint.endpoint.id)).find((d) => d.event_type === 'contact.created')!;
    await call('webhooks-resend', { endpoint_id: okEndpoint.endpoint.id, delivery_id: created.id });
    expect((await call<{ queued: number }>('webhooks-recover', { endpoint_id: failEndpoint.endpoint.id, since: start })).queued).toBeGreaterThanOrEqual(1);
    const replayed = await call<{ queued: number }>('webhooks-replay', { endpoint_id: okEndpoint.endpoint.id, since: start, types: ['contact.created', 'contact.updated'] });
    expect(replayed.queued).toBeGreaterThanOrEqual(2);
    const after = await until(async () => {
      const got = receiver.received.slice(receivedBefore);
      const sent = got.filter((r) => r.path === '/ok' && /"contact\.(created|updated)"/.test(r.body)).length;
      return sent >= 1 + replayed.queued && got.some((r) => r.path === '/fail') ? got : undefined;
    }, 30_000, 'the resent, recovered and replayed deliveries');
    for (const r of after) {
      expect(r.body).not.toContain(canary);
      const payload = JSON.parse(r.body) as { record_id?: string; data: unknown };
      if (payload.record_id === contact.id) expect(payload.data).toEqual({ id: contact.id });
    }

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

  it('deletes the mail sent from or to any address the contact had, matched to no contact when it came', async () => {
    const canary = `addrcanary${randomUUID().slice(0, 8)}`;
    const [earlier, current, bystander] = [`old.${canary}@example.com`, `new.${canary}@example.com`, `bystander.${canary}@example.com`];
    const inbound = stack.inboundAddresses[0]!.address;
    const mailOf = async (subject: string) => (await call<{ items: Rec[] }>('inbound-emails-list', { limit: 100 })).items.find((e) => e.subject === subject);
    const send = async (message: Record<string, unknown>) => {
      await sendMail({ to: inbound, messageId: `<${randomUUID()}@x>`, text: `about ${canary}`, ...message });
      return until(() => mailOf(String(message.subject)), 30_000, String(message.subject));
    };
    // Before the contact exists (in another case), and to its earlier address after it changed.
    const before = await send({ from: earlier.toUpperCase(), subject: `before ${canary}` });
    const contact = await call<Rec>('contacts-create', { first_name: 'Addr', email: earlier });
    await call('contacts-update', { id: contact.id, email: current });
    const afterChange = await send({ from: bystander, cc: `Old Name <${earlier}>`, subject: `cc old ${canary}` });
    const kept = await send({ from: bystander, subject: `kept ${canary}` });
    for (const e of [before, afterChange, kept]) expect(e.matched_contact_ids).toEqual([]);

    const erasure = await call<{ id: string }>('erasures-create', { contact_id: contact.id });
    const done = await completed(erasure.id);
    expect(done.removed).toMatchObject({ inbound_emails: 2 });
    expect((await raw('inbound-emails-get', { id: before.id })).error?.code).toBe('inbound_emails.not_found');
    expect((await raw('inbound-emails-get', { id: afterChange.id })).error?.code).toBe('inbound_emails.not_found');
    expect((await call<Rec>('inbound-emails-get', { id: kept.id })).id).toBe(kept.id);
    const listed = JSON.stringify(await call('inbound-emails-list', { limit: 100 }));
    expect(listed).not.toContain(earlier);
    expect(listed).toContain(`kept ${canary}`);
    // Their raw messages went with them; the bystander's stays.
    const raws = (await objects(stack.resources.buckets.inbound)).filter((o) => o.text.includes(canary)).map((o) => o.text);
    expect(raws).toHaveLength(1);
    expect(raws[0]).toContain(`kept ${canary}`);
  }, 120_000);

  it('refuses a suppressed email, in any case, on every path that writes one', async () => {
    const email = `supp${randomUUID().slice(0, 8)}@example.com`;
    const upper = email.toUpperCase();
    const erased = await call<Rec>('contacts-create', { first_name: 'Sup', email });
    // A duplicate holding the address stays (it is not the erased contact): merging it, or upserting its address, must not write it again.
    const duplicate = await call<Rec>('contacts-create', { first_name: 'Dup', email });
    const erasure = await call<{ id: string; suppress_email: boolean }>('erasures-create', { contact_id: erased.id, suppress_email: true });
    expect(erasure.suppress_email).toBe(true);
    await completed(erasure.id);
    const other = await call<Rec>('contacts-create', { first_name: 'Other' });
    const empty = await call<Rec>('contacts-create', { first_name: 'Empty' });
    type Results = { results: Array<{ ok: boolean; error?: { code: string } }> };
    const codeOf = async (op: string, body: unknown) => (await raw(op, body)).error?.code;
    const firstResult = async (op: string, body: unknown) => (await call<Results>(op, body)).results[0]!.error?.code;
    const importRow = async (mode: string) => {
      const job = await call<Rec>('imports-create', { object_type: 'contacts', mode, csv: `first_name,email\nImported,${upper}\n` });
      await until(async () => ((await call<Rec>('imports-get', { id: job.id })).status === 'completed' ? true : undefined), 30_000, 'the import');
      const [row] = (await call<{ items: Array<{ row_number: number; column: string; code: string; message: string; value: string }> }>('imports-errors', { import_id: job.id })).items;
      // The row error's own code, on the email column; the address is not stored again, not even in the row's error.
      expect(row, `import (${mode})`).toMatchObject({ row_number: 2, column: 'email', code: 'email_suppressed', value: '' });
      return row && row.code === 'email_suppressed' && row.column === 'email' && /suppressed/.test(row.message) && row.value === '' ? 'contacts.email_suppressed' : JSON.stringify(row);
    };
    const paths: Record<string, () => Promise<string | undefined>> = {
      create: () => codeOf('contacts-create', { first_name: 'Again', email: upper }),
      update: () => codeOf('contacts-update', { id: other.id, email }),
      'batch-create': () => firstResult('contacts-batch-create', { items: [{ first_name: 'B', email: upper }] }),
      'batch-update': () => firstResult('contacts-batch-update', { items: [{ id: other.id, email: upper }] }),
      'batch-upsert (matches the duplicate)': () => firstResult('contacts-batch-upsert', { items: [{ email: upper, first_name: 'Up' }] }),
      'import (upsert)': () => importRow('upsert'),
      'import (create)': () => importRow('create'),
      'merge (the primary takes the email)': () => codeOf('contacts-merge', { primary_id: empty.id, secondary_id: duplicate.id }),
    };
    const outcomes: Record<string, string | undefined> = {};
    for (const [path, run] of Object.entries(paths)) outcomes[path] = await run();
    expect(outcomes).toEqual(Object.fromEntries(Object.keys(paths).map((p) => [p, 'contacts.email_suppressed'])));
    // Nothing was written: no contact but the duplicate holds the address, and a batch's other rows go on.
    expect((await call<{ items: Rec[] }>('contacts-list', { filter: { field: 'email', op: 'eq', value: email } })).items.map((c) => c.id)).toEqual([duplicate.id]);
    expect((await call<Results>('contacts-batch-create', { items: [{ first_name: 'C', email: upper }, { first_name: 'D' }] })).results.map((r) => r.ok)).toEqual([false, true]);
  }, 120_000);

  it('erases a contact’s many activities several at once, counting every one and every event of theirs', async () => {
    const contact = await call<Rec>('contacts-create', { first_name: 'Many', email: `many${randomUUID().slice(0, 8)}@example.com` });
    const n = 9;
    const made = await call<{ results: { ok: boolean; record: Rec }[] }>('activities-batch-create', { items: Array.from({ length: n }, (_, i) => ({ type: 'note', subject: `n${i}`, contact_ids: [contact.id] })) });
    const ids = made.results.map((r) => r.record.id);
    // Every activity.created is in the change log before the erasure reads it.
    await stack.poller.drain();
    const erasure = await call<{ id: string }>('erasures-create', { contact_id: contact.id });
    const done = await completed(erasure.id);
    expect(done.removed.activities).toBe(n);
    // contact.created and each activity.created, none lost between activities erased together.
    expect(done.removed.events).toBeGreaterThanOrEqual(1 + n);
    for (const id of ids) expect((await raw('activities-get', { id })).error?.code).toBe('activities.not_found');
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
