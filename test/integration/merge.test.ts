/**
 * Merging duplicates (contract §15): fields, tags and custom fields, links moved (by the stream
 * worker, in bounded chunks), events, the secondary in the trash, and a merge of a contact on
 * more activities than two chunks hold.
 */
import { randomUUID } from 'node:crypto';
import nodemailer from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpListener } from '../../local/smtp.js';
import { mergeChunk } from '../../shared/domain/records/merge.js';
import { ENTITY_EVENTS } from '../../shared/schemas/entities/index.js';
import { invoke, newAccount, ok } from '../helpers/api.js';
import { type Pipeline, Receiver, registerEndpoint, type Received, startPipeline, waitFor } from '../helpers/webhook-harness.js';

process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
process.env.WEBHOOK_RETRY_DELAYS = '0,0,0';
// Chunks of 50 links (the product's 250, shared/domain/records/merge.ts): three chunks from 150 activities.
process.env.CRM_MERGE_CHUNK = '50';

type Rec = Record<string, unknown> & { id: string };
type Auth = ReturnType<typeof newAccount>;
type Payload = NonNullable<Received['payload']> & { previous_attributes?: Record<string, unknown>; merged_id?: string; record_id?: string; actor?: unknown };


/** Activities on the merged contact: three chunks (CRM_MERGE_CHUNK) of links to move. */
const LINKS = 150;

let pipeline: Pipeline;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await new Receiver().start();
  pipeline = await startPipeline();
});
afterAll(async () => {
  await pipeline?.stop();
  await receiver?.close();
});

async function expectError(op: string, body: unknown, auth: Auth, code: string) {
  const r = await invoke(op, body, auth);
  expect(r.body.error?.code, JSON.stringify(r.body)).toBe(code);
}

async function events(path: string, n: number, pick: (p: Payload) => boolean = () => true): Promise<Payload[]> {
  return waitFor(() => {
    const got = receiver.at(path).filter((r) => r.verified && pick(r.payload as Payload)).map((r) => r.payload as Payload);
    return got.length >= n ? got : undefined;
  }, 15_000, `${n} events on ${path}`);
}

describe('contacts-merge', () => {
  it('merges fields, tags and custom fields; moves every link; trashes the secondary; raises the events', async () => {
    const auth = newAccount();
    await registerEndpoint(auth, receiver, '/merge-c', [...ENTITY_EVENTS]);
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const tier = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Tier', field_type: 'text' }, auth);
    const size = await ok<Rec>('custom-fields-create', { entity_type: 'contact', name: 'Size', field_type: 'number' }, auth);
    const primary = await ok<Rec>('contacts-create', { first_name: 'Ada', email: 'ada@example.com', tags: ['vip', 'a'], custom_fields: { [tier.id]: 'Gold' } }, auth);
    const secondary = await ok<Rec>('contacts-create', { first_name: 'Augusta', last_name: 'King', email: 'augusta@example.com', phone: '555', company_id: co.id, tags: ['a', 'b'], custom_fields: { [tier.id]: 'Silver', [size.id]: 3 } }, auth);
    const other = await ok<Rec>('contacts-create', { first_name: 'Other' }, auth);
    const a1 = await ok<Rec>('activities-create', { type: 'call', contact_ids: [secondary.id, other.id] }, auth);
    const a2 = await ok<Rec>('activities-create', { type: 'call', contact_ids: [primary.id, secondary.id] }, auth);
    const p1 = await ok<Rec>('projects-create', { name: 'P', contact_ids: [other.id, secondary.id] }, auth);
    await pipeline.poller!.drain();

    const merged = await ok<Rec>('contacts-merge', { primary_id: primary.id, secondary_id: secondary.id }, auth);
    expect(merged).toMatchObject({
      id: primary.id,
      first_name: 'Ada',
      last_name: 'King',
      email: 'ada@example.com',
      phone: '555',
      company_id: co.id,
      company_name: 'Acme',
      tags: ['vip', 'a', 'b'],
      custom_fields: { [tier.id]: 'Gold', [size.id]: 3 },
      created_at: primary.created_at,
    });
    expect(await ok('contacts-get', { id: primary.id }, auth)).toEqual(merged);
    await expectError('contacts-get', { id: secondary.id }, auth, 'contacts.not_found');
    await pipeline.poller!.drain();
    expect((await ok<Rec>('activities-get', { id: a1.id }, auth)).contact_ids).toEqual([primary.id, other.id]);
    expect((await ok<Rec>('activities-get', { id: a2.id }, auth)).contact_ids).toEqual([primary.id]);
    expect((await ok<Rec>('projects-get', { id: p1.id }, auth)).contact_ids).toEqual([other.id, primary.id]);
    expect((await ok<{ items: Rec[] }>('activities-list', { contact_id: primary.id }, auth)).items.map((x) => x.id).sort()).toEqual([a1.id, a2.id].sort());
    expect((await ok<{ items: Rec[] }>('activities-list', { contact_id: secondary.id }, auth)).items).toEqual([]);
    expect((await ok<{ items: Array<{ record: Rec }> }>('trash-list', {}, auth)).items.map((t) => t.record.id)).toEqual([secondary.id]);

    const got = await events('/merge-c', 1, (p) => p.event === 'contact.merged');
    expect(got[0]).toMatchObject({ event: 'contact.merged', record_id: primary.id, data: merged, merged_id: secondary.id, actor: { type: 'api_key' } });
    const all = receiver.at('/merge-c').map((r) => r.payload as Payload);
    const primaryUpdate = all.find((p) => p.event === 'contact.updated' && p.record_id === primary.id)!;
    expect(primaryUpdate.previous_attributes).toMatchObject({ last_name: '', phone: '', company_id: null, tags: ['vip', 'a'] });
    expect(all.find((p) => p.event === 'contact.deleted')).toMatchObject({ record_id: secondary.id });
    const repointed = all.filter((p) => (p.event === 'activity.updated' || p.event === 'project.updated') && (p.actor as { type: string }).type === 'system');
    expect(repointed.map((p) => p.record_id).sort()).toEqual([a1.id, a2.id, p1.id].sort());

    // The change log has the merge, with the caller as actor.
    const log = await ok<{ items: Payload[] }>('events-list', { types: ['contact.merged'] }, auth);
    expect(log.items).toHaveLength(1);
    expect(log.items[0]).toMatchObject({ id: got[0]!.id, merged_id: secondary.id, actor: { type: 'api_key' } });

    // Restoring the secondary does not undo the merge.
    const back = await ok<Rec>('contacts-restore', { id: secondary.id }, auth);
    expect(back).toMatchObject({ id: secondary.id, first_name: 'Augusta' });
    await pipeline.poller!.drain();
    expect((await ok<Rec>('activities-get', { id: a1.id }, auth)).contact_ids).toEqual([primary.id, other.id]);
    expect((await ok<Rec>('contacts-get', { id: primary.id }, auth)).email).toBe('ada@example.com');
  });

  it('moves inbound emails\' matched_contact_ids', async () => {
    process.env.CRM_INBOUND_DOMAIN = 'inbound.localhost';
    const smtp = await startSmtpListener({ port: 0 });
    try {
      const auth = newAccount();
      const { address } = await ok<{ address: string }>('inbound-emails-address', {}, auth);
      const primary = await ok<Rec>('contacts-create', { first_name: 'P', email: 'p@example.com' }, auth);
      const secondary = await ok<Rec>('contacts-create', { first_name: 'S', email: 's@example.com' }, auth);
      const t = nodemailer.createTransport({ host: '127.0.0.1', port: smtp.port, secure: false, ignoreTLS: true });
      await t.sendMail({ from: 's@example.com', to: address, subject: 'hello', text: 'hi', messageId: `<${randomUUID()}@merge>` });
      t.close();
      const [email] = await waitFor(async () => {
        const items = (await ok<{ items: Rec[] }>('inbound-emails-list', { contact_id: secondary.id }, auth)).items;
        return items.length ? items : undefined;
      }, 10_000, 'the email');
      await pipeline.poller!.drain();
      await ok('contacts-merge', { primary_id: primary.id, secondary_id: secondary.id }, auth);
      await pipeline.poller!.drain();
      expect((await ok<Rec>('inbound-emails-get', { id: email!.id }, auth)).matched_contact_ids).toEqual([primary.id]);
      expect((await ok<{ items: Rec[] }>('inbound-emails-list', { contact_id: primary.id }, auth)).items.map((x) => x.id)).toEqual([email!.id]);
      expect((await ok<{ items: Rec[] }>('inbound-emails-list', { contact_id: secondary.id }, auth)).items).toEqual([]);
      expect((await ok<{ items: Rec[] }>('activities-list', { contact_id: primary.id }, auth)).items).toHaveLength(1);
    } finally {
      await smtp.stop();
    }
  });

  it('merges a secondary that adds nothing: the primary unchanged, the secondary in the trash, its links moved', async () => {
    const auth = newAccount();
    const primary = await ok<Rec>('contacts-create', { first_name: 'Ada', last_name: 'L', tags: ['a'] }, auth);
    const secondary = await ok<Rec>('contacts-create', { first_name: 'Ada', tags: ['a'] }, auth);
    const act = await ok<Rec>('activities-create', { type: 'note', contact_ids: [secondary.id] }, auth);
    expect(await ok<Rec>('contacts-merge', { primary_id: primary.id, secondary_id: secondary.id }, auth)).toEqual(primary);
    await pipeline.poller!.drain();
    expect((await ok<Rec>('activities-get', { id: act.id }, auth)).contact_ids).toEqual([primary.id]);
    expect((await ok<{ items: Array<{ record: Rec }> }>('trash-list', {}, auth)).items.map((t) => t.record.id)).toEqual([secondary.id]);
    const log = await ok<{ items: Payload[] }>('events-list', { record_id: primary.id }, auth);
    expect(log.items.map((e) => e.event)).toEqual(['contact.created', 'contact.merged']);
  });

  it('rejects the same id twice, missing records and bad ids', async () => {
    const auth = newAccount();
    const a = await ok<Rec>('contacts-create', { first_name: 'A' }, auth);
    const MISSING = '3f1c1f7e-8a4b-4c1e-9a57-1d2b3c4d5e6f';
    await expectError('contacts-merge', { primary_id: a.id, secondary_id: a.id }, auth, 'contacts.invalid_request');
    await expectError('contacts-merge', { primary_id: a.id, secondary_id: MISSING }, auth, 'contacts.not_found');
    await expectError('contacts-merge', { primary_id: MISSING, secondary_id: a.id }, auth, 'contacts.not_found');
    await expectError('contacts-merge', { primary_id: a.id }, auth, 'contacts.invalid_request');
    await expectError('contacts-merge', { primary_id: a.id, secondary_id: 'x' }, auth, 'contacts.invalid_id');
    await expectError('contacts-merge', { primary_id: a.id, secondary_id: MISSING, extra: 1 }, auth, 'contacts.invalid_request');
    const b = await ok<Rec>('contacts-create', { first_name: 'B' }, newAccount());
    await expectError('contacts-merge', { primary_id: a.id, secondary_id: b.id }, auth, 'contacts.not_found');
    expect(await ok<Rec>('contacts-get', { id: a.id }, auth)).toEqual(a);
  });

  it(`merges a contact on ${LINKS} activities: every link moves, in bounded chunks`, async () => {
    const auth = newAccount();
    const primary = await ok<Rec>('contacts-create', { first_name: 'Primary' }, auth);
    const secondary = await ok<Rec>('contacts-create', { first_name: 'Secondary' }, auth);
    expect(LINKS).toBeGreaterThan(2 * mergeChunk());
    for (let i = 0; i < LINKS / 50; i++) {
      await ok('activities-batch-create', { items: Array.from({ length: 50 }, (_, j) => ({ type: 'note', subject: `n${i}-${j}`, contact_ids: [secondary.id] })) }, auth);
    }
    await pipeline.poller!.drain();
    const started = Date.now();
    await ok('contacts-merge', { primary_id: primary.id, secondary_id: secondary.id }, auth);
    const answered = Date.now() - started;
    await waitFor(async () => ((await ok<{ items: Rec[] }>('activities-list', { contact_id: secondary.id, limit: 1 }, auth)).items.length === 0 ? true : undefined), 60_000, 'every link moved');
    const moved = Date.now() - started;
    await pipeline.poller!.drain(60_000);
    console.log(`merge of a contact on ${LINKS} activities: answered in ${answered} ms, links moved in ${moved} ms, stream idle after ${Date.now() - started} ms`);
    let count = 0;
    let cursor = '';
    do {
      const page = await ok<{ items: Rec[]; next_cursor: string }>('activities-list', { contact_id: primary.id, limit: 100, ...(cursor ? { cursor } : {}) }, auth);
      count += page.items.length;
      expect(page.items.every((x) => (x.contact_ids as string[]).join() === primary.id)).toBe(true);
      cursor = page.next_cursor;
    } while (cursor);
    expect(count).toBe(LINKS);
    expect((await ok<{ items: Rec[] }>('activities-list', { contact_id: secondary.id }, auth)).items).toEqual([]);
  }, 120_000);
});

describe('companies-merge', () => {
  it('moves contacts, projects and activities to the primary with its name', async () => {
    const auth = newAccount();
    const primary = await ok<Rec>('companies-create', { name: 'Acme', domain: 'acme.com' }, auth);
    const secondary = await ok<Rec>('companies-create', { name: 'ACME Ltd', domain: 'acme.co.uk', industry: 'Engines' }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'C', company_id: secondary.id }, auth);
    const p = await ok<Rec>('projects-create', { name: 'P', company_id: secondary.id }, auth);
    const a = await ok<Rec>('activities-create', { type: 'note', company_id: secondary.id }, auth);
    const merged = await ok<Rec>('companies-merge', { primary_id: primary.id, secondary_id: secondary.id }, auth);
    expect(merged).toMatchObject({ id: primary.id, name: 'Acme', domain: 'acme.com', industry: 'Engines' });
    // Reads show the primary at once, before the stream worker has moved the links (never the secondary's name).
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ company_id: primary.id, company_name: 'Acme' });
    expect(await ok<Rec>('projects-get', { id: p.id }, auth)).toMatchObject({ company_id: primary.id, company_name: 'Acme' });
    await pipeline.poller!.drain();
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ company_id: primary.id, company_name: 'Acme' });
    expect(await ok<Rec>('projects-get', { id: p.id }, auth)).toMatchObject({ company_id: primary.id, company_name: 'Acme' });
    expect(await ok<Rec>('activities-get', { id: a.id }, auth)).toMatchObject({ company_id: primary.id });
    expect((await ok<{ items: Rec[] }>('contacts-list', { search: 'acme' }, auth)).items.map((x) => x.id)).toEqual([c.id]);
    expect((await ok<{ items: Rec[] }>('contacts-list', { company_id: secondary.id }, auth)).items).toEqual([]);
    expect((await ok<{ items: Rec[] }>('companies-list', {}, auth)).items.map((x) => x.id)).toEqual([primary.id]);
    // A restored secondary comes back without its links (the merge stays).
    await ok('companies-restore', { id: secondary.id }, auth);
    await pipeline.poller!.drain();
    expect(await ok<Rec>('contacts-get', { id: c.id }, auth)).toMatchObject({ company_id: primary.id });
  });
});
