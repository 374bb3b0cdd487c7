/**
 * Events of every entity of the entity list (contract §6, §8, §9): signed, delivered, with
 * `previous_attributes` on `*.updated`, and the cascades' `*.updated` events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENTITY_EVENTS } from '../../shared/schemas/entities/index.js';
import { newAccount, ok } from '../helpers/api.js';
import { type Pipeline, Receiver, registerEndpoint, type Received, startPipeline, waitFor } from '../helpers/webhook-harness.js';

process.env.CRM_ALLOW_INSECURE_WEBHOOKS = 'true';
process.env.WEBHOOK_RETRY_DELAYS = '0,0,0';

type Rec = Record<string, unknown> & { id: string };
type Payload = NonNullable<Received['payload']> & { previous_attributes?: Record<string, unknown> };

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

/** Waits until `path` received `n` verified events matching `pick`, and returns them in arrival order. */
async function events(path: string, n: number, pick: (p: Payload) => boolean = () => true): Promise<Payload[]> {
  return waitFor(() => {
    const got = receiver.at(path).filter((r) => r.verified && pick(r.payload as Payload)).map((r) => r.payload as Payload);
    return got.length >= n ? got : undefined;
  }, 8_000, `${n} events on ${path}`);
}

describe('entity events', () => {
  it('delivers project.* and activity.* signed, with previous_attributes on *.updated', async () => {
    const auth = newAccount();
    await registerEndpoint(auth, receiver, '/pa', [...ENTITY_EVENTS]);
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
    const p = await ok<Rec>('projects-create', { name: 'Engine', contact_ids: [ada.id] }, auth);
    const done = await ok<Rec>('projects-update', { id: p.id, status: 'completed', stage: 'won' }, auth);
    const call = await ok<Rec>('activities-create', { type: 'call', contact_ids: [ada.id], project_id: p.id }, auth);
    const call2 = await ok<Rec>('activities-update', { id: call.id, subject: 'Kick-off' }, auth);
    await ok('activities-delete', { id: call.id }, auth);

    const got = await events('/pa', 6);
    const byEvent = (e: string) => got.filter((x) => x.event === e);
    expect(byEvent('project.created')[0]).toMatchObject({ data: p });
    expect(byEvent('project.updated')[0]).toMatchObject({
      data: done,
      previous_attributes: { status: 'open', stage: '', closed_at: null },
    });
    expect(Object.keys(byEvent('project.updated')[0]!.previous_attributes!).sort()).toEqual(['closed_at', 'stage', 'status']);
    expect(byEvent('activity.created')[0]).toMatchObject({ data: call });
    expect(byEvent('activity.updated')[0]).toMatchObject({ data: call2, previous_attributes: { subject: '' } });
    expect(byEvent('activity.deleted')[0]).toMatchObject({ data: call2 });
    expect(byEvent('contact.created')).toHaveLength(1);
    // Only *.updated carries previous_attributes.
    expect(got.filter((x) => x.previous_attributes !== undefined).every((x) => x.event.endsWith('.updated'))).toBe(true);
  });

  it('contact.updated and company.updated carry previous_attributes as the API returned them', async () => {
    const auth = newAccount();
    await registerEndpoint(auth, receiver, '/cc', ['contact.updated', 'company.updated']);
    const co = await ok<Rec>('companies-create', { name: 'Acme', tags: ['a'] }, auth);
    const c = await ok<Rec>('contacts-create', { first_name: 'Ada', city: 'Paris' }, auth);
    await ok('contacts-update', { id: c.id, city: 'London', company_id: co.id }, auth);
    await ok('companies-update', { id: co.id, tags: ['a', 'b'] }, auth);
    const got = await events('/cc', 2);
    expect(got.find((x) => x.event === 'contact.updated')!.previous_attributes).toEqual({ city: 'Paris', company_id: null, company_name: '' });
    expect(got.find((x) => x.event === 'company.updated')!.previous_attributes).toEqual({ tags: ['a'] });
  });

  it('cascades raise *.updated: a deleted company unlinks projects and activities, a deleted contact leaves contact_ids', async () => {
    const auth = newAccount();
    await registerEndpoint(auth, receiver, '/cascade', ['project.updated', 'activity.updated']);
    const co = await ok<Rec>('companies-create', { name: 'Acme' }, auth);
    const ada = await ok<Rec>('contacts-create', { first_name: 'Ada' }, auth);
    const p = await ok<Rec>('projects-create', { name: 'Engine', company_id: co.id, contact_ids: [ada.id] }, auth);
    const a = await ok<Rec>('activities-create', { type: 'note', company_id: co.id }, auth);
    await ok('companies-delete', { id: co.id }, auth);
    await ok('contacts-delete', { id: ada.id }, auth);
    const got = await events('/cascade', 3);
    const projectEvents = got.filter((x) => x.event === 'project.updated' && x.data.id === p.id);
    expect(projectEvents.some((x) => x.previous_attributes?.company_id === co.id && x.data.company_id === null)).toBe(true);
    expect((await events('/cascade', 1, (x) => x.event === 'project.updated' && (x.data.contact_ids as string[]).length === 0))[0]!.previous_attributes).toMatchObject({ contact_ids: [ada.id] });
    expect(got.some((x) => x.event === 'activity.updated' && x.data.id === a.id && x.data.company_id === null)).toBe(true);
  });
});
