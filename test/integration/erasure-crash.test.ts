/**
 * Contract §18 with §7: an erasure killed half-way (kill -9 of `npm start` and of DynamoDB Local)
 * resumes after a restart on the same CRM_DATA_DIR, reaches `completed` once, and what it raises
 * (`contact.erased`, the project's `project.updated`, the activity's `activity.deleted`) is in
 * the change log once and delivered once. The kill lands at a signal, not by timing: with
 * `CRM_ERASURE_HOLD_AT=erased_event` the worker logs `erasure held` once `contact.erased` is
 * appended and queued, before that step's end is saved, so the restarted worker runs the step again.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call, crash, type Service, startService } from '../helpers/local-service.js';
import { Receiver } from '../helpers/webhook-harness.js';

type Rec = Record<string, unknown> & { id: string };
type Event = { id: string; event: string; record_id: string; data: Record<string, unknown> };

const started: Service[] = [];
const dirs: string[] = [];
const receiver = new Receiver();
afterAll(async () => {
  for (const s of started) if (s.child.exitCode === null) await crash(s).catch(() => undefined);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await receiver.close();
});

async function result<T = Rec>(s: Service, op: string, body: unknown): Promise<T> {
  const r = await call<T>(s, op, body);
  if (r.status !== 200) throw new Error(`${op}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.result;
}

async function until<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const start = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const eventsOf = async (s: Service, type: string, recordId: string) =>
  (await result<{ items: Event[] }>(s, 'events-list', { types: [type], limit: 100 })).items.filter((e) => e.record_id === recordId);

describe('an erasure killed half-way', () => {
  it('resumes after a restart: completed once, contact.erased and its cascades logged and delivered once', async () => {
    await receiver.start();
    const dataDir = mkdtempSync(join(tmpdir(), 'crm-erasure-crash-'));
    dirs.push(dataDir);
    const s = await startService({ CRM_DATA_DIR: dataDir, CRM_ERASURE_HOLD_AT: 'erased_event' });
    started.push(s);
    const hook = await result<{ endpoint: Rec; signing_secret: string }>(s, 'webhooks-create', { url: `${receiver.baseUrl}/hook`, events: ['contact.erased', 'project.updated', 'activity.deleted'] });
    receiver.secret('/hook', hook.signing_secret);
    const contact = await result(s, 'contacts-create', { first_name: 'Held', email: 'held@crash.example' });
    const project = await result(s, 'projects-create', { name: 'Kept', contact_ids: [contact.id] });
    const activity = await result(s, 'activities-create', { type: 'note', subject: 'only Held', contact_ids: [contact.id] });
    const erasure = await result(s, 'erasures-create', { contact_id: contact.id });

    await until(() => (/erasure held/.test(s.output()) ? true : undefined), 20_000, 'the worker to hold');
    const held = await result<{ status: string; removed: Record<string, number> }>(s, 'erasures-get', { id: erasure.id });
    expect(held).toMatchObject({ status: 'pending', removed: { records: 1, activities: 1 } });
    expect(await eventsOf(s, 'contact.erased', contact.id)).toHaveLength(1);
    await crash(s);

    const after = await startService({ CRM_DATA_DIR: dataDir });
    started.push(after);
    const done = await until(async () => {
      const e = await result<{ status: string; removed: Record<string, number>; completed_at: string | null }>(after, 'erasures-get', { id: erasure.id });
      return e.status === 'completed' ? e : undefined;
    }, 20_000, 'the erasure to complete after the restart');
    expect(done.removed).toMatchObject({ records: 1, activities: 1 });
    expect((await result<{ items: Rec[] }>(after, 'erasures-list', {})).items.filter((e) => e.contact_id === contact.id)).toHaveLength(1);

    // The cascade's update of the project follows from the stream (its position survived the crash).
    await until(async () => ((await result<{ contact_ids: string[] }>(after, 'projects-get', { id: project.id })).contact_ids.length === 0 ? true : undefined), 20_000, 'the project unlinked');
    await until(async () => ((await eventsOf(after, 'project.updated', project.id)).length > 0 ? true : undefined), 20_000, 'project.updated');
    const erased = await eventsOf(after, 'contact.erased', contact.id);
    expect(erased).toHaveLength(1);
    expect(erased[0]!.data).toEqual({ id: contact.id });
    expect(await eventsOf(after, 'project.updated', project.id)).toHaveLength(1);
    const deleted = await eventsOf(after, 'activity.deleted', activity.id);
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.data).toEqual({ id: activity.id });

    // One delivery each, all delivered (the receiver dedupes by webhook-id anyway).
    const deliveries = await until(async () => {
      const d = (await result<{ deliveries: Array<{ event_type: string; event_id: string; status: string }> }>(after, 'webhooks-deliveries', { endpoint_id: hook.endpoint.id, limit: 100 })).deliveries;
      return d.length >= 3 && d.every((x) => x.status === 'delivered') ? d : undefined;
    }, 20_000, 'the deliveries');
    expect(deliveries.map((d) => d.event_type).sort()).toEqual(['activity.deleted', 'contact.erased', 'project.updated']);
    const ids = new Set(receiver.at('/hook').map((r) => r.payload?.id));
    expect([...ids].filter((id) => id === erased[0]!.id)).toHaveLength(1);
    await crash(after);
  }, 120_000);
});
