/**
 * The erasure worker (contract §18): one erasure per message, in steps. Each step is idempotent
 * and its end is saved (the job's `position`, with what it removed) by a conditional update of
 * the worker holding the job's lease; a worker that dies mid-step leaves the position where it
 * was, and the next one (the message comes back; locally, recovery re-queues it) does that step
 * again. The job reaches `completed` once (a conditional update from `pending`); `contact.erased`
 * has a deterministic event id (`erasure:<id>`), appended and delivered once.
 *
 * Every copy is found by a query of a partition keyed by the person (its change-log history, its
 * deliveries' index, its stored answers' index, its inbound emails' index, its reference index)
 * or by the account's export and import jobs (a list bounded by the account's jobs); never a scan.
 */
import type { RecordChange } from '../db/changes.js';
import { clearActiveErasure, type ErasureItem, getErasureItem, leaseErasure, markErased } from '../db/erasures.js';
import { recordEntries, rewriteEntryBody } from '../db/events.js';
import { queryExports, updateExportItem } from '../db/exports.js';
import { answersOfRecord, eraseAnswer } from '../db/idempotency-store.js';
import { queryImports, queryRowErrors, redactRowError } from '../db/imports.js';
import { deleteObject, openObject } from '../db/objects.js';
import { getTrash, purgeMerge } from '../db/trash.js';
import { deliveriesOfRecord, rewriteDeliveryBody } from '../db/webhooks.js';
import { eraseInboundEmailsOf } from '../domain/inbound-emails.js';
import { purge, purgeOnlyLinked } from '../domain/records/erase.js';
import { familyOf } from '../domain/records/family.js';
import { contactEntity } from '../schemas/entities/index.js';
import type { PersonalKind } from '../schemas/keys/index.js';
import { isPersonalEvent, redactEventBody, type RemovedKind } from '../schemas/erasures.js';
import { logChanges } from '../stream/change-log.js';
import { enqueueWebhookDeliveries, WebhookBatchCache } from '../webhooks/pipeline.js';
import { requireEnv } from '../config/env.js';
import { bindingEnv } from '../config/bindings.js';
import { type ErasureMessage, erasureQueueFairness } from './storage.js';

export const ERASURE_LEASE_MS = 60_000;

/** Two of an account's erasures run at once (the queue runs 4 locally, 5 deployed: functions/topology.ts; shared/http/job-handler.ts). */
export const erasureFairness = erasureQueueFairness('erasures', 2);

export interface ErasureWorkerDeps {
  /** Called after each step's end is saved (tests inject crashes here). */
  afterStep?: (step: string) => void | Promise<void>;
  /** Called once a step's work is done, before its end is saved (a crash here runs the step again). */
  beforeSave?: (step: string) => void | Promise<void>;
  leaseMs?: number;
}

interface Person {
  accountId: string;
  contactId: string;
  /** The contact's string values (read before the purge step; empty after it). */
  values: string[];
  email: string;
  job: ErasureItem & { actor?: unknown };
}

type Counts = Partial<Record<RemovedKind, number>>;

/** One step: the item kinds it reaches (shared/erasures/paths.ts checks every personal kind is reached) and its work. */
interface Step {
  name: string;
  reaches: readonly PersonalKind[];
  run: (p: Person) => Promise<Counts>;
}

const contacts = () => familyOf(contactEntity);
const REDACTED = '[erased]';

async function contactValues(accountId: string, id: string): Promise<{ values: string[]; email: string }> {
  const record = (await contacts().store.get(accountId, id)) ?? (await getTrash(accountId, 'contact', id))?.record;
  if (!record) return { values: [], email: '' };
  const fields = Object.keys(contactEntity.fields);
  const values = fields.flatMap((f) => {
    const v = record[f];
    return typeof v === 'string' ? [v] : Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  });
  const custom = record.custom_fields && typeof record.custom_fields === 'object' ? Object.values(record.custom_fields as object).filter((x): x is string => typeof x === 'string') : [];
  return { values: [...values, ...custom].map((s) => s.trim()).filter((s) => s.length >= 3), email: typeof record.email === 'string' ? record.email.toLowerCase() : '' };
}

/**
 * Every address the contact had: its email now and the ones its history names (`data` and
 * `previous_attributes` of its events, read before the events step redacts them). Lower-cased.
 */
async function addressesOf(p: Person): Promise<string[]> {
  const found = new Set(p.email ? [p.email] : []);
  for await (const entry of recordEntries(p.accountId, p.contactId)) {
    const body = JSON.parse(entry.body) as { data?: { email?: unknown }; previous_attributes?: { email?: unknown } };
    for (const v of [body.data?.email, body.previous_attributes?.email]) if (typeof v === 'string' && v.trim()) found.add(v.trim().toLowerCase());
  }
  return [...found];
}

/** Jobs of the account, all pages (a list bounded by the account's jobs). */
async function allJobs<T extends { created_at: string; id: string }>(query: (accountId: string, limit: number, after?: string) => Promise<T[]>, accountId: string): Promise<T[]> {
  const out: T[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await query(accountId, 100, after);
    out.push(...page);
    if (page.length < 100) return out;
    after = `${page[page.length - 1]!.created_at}#${page[page.length - 1]!.id}`;
  }
}

async function fileHolds(key: string, needle: string): Promise<boolean> {
  if (!needle) return false;
  const stream = await openObject(requireEnv(bindingEnv('importsBucket')), key).catch(() => undefined);
  if (!stream) return false;
  let tail = '';
  for await (const chunk of stream) {
    const text = tail + (chunk as Buffer).toString('utf8').toLowerCase();
    if (text.includes(needle)) {
      (stream as { destroy?: () => void }).destroy?.();
      return true;
    }
    tail = text.slice(-needle.length);
  }
  return false;
}

/** A contact's or an activity's history: each entry's three copies redacted. */
async function redactEvents(accountId: string, recordId: string): Promise<number> {
  let events = 0;
  for await (const entry of recordEntries(accountId, recordId)) {
    if (!isPersonalEvent(entry.event)) continue;
    const parsed = JSON.parse(entry.body) as { merged_id?: string };
    // A merge into this contact kept its image in the merge item (in the secondary's partition).
    if (entry.event === 'contact.merged' && parsed.merged_id) await purgeMerge(accountId, 'contact', parsed.merged_id);
    const body = redactEventBody(entry.body);
    if (body !== entry.body) await rewriteEntryBody(accountId, entry, body);
    events++;
  }
  return events;
}

/** A contact's or an activity's deliveries (its index by record): each stored body redacted. */
async function redactDeliveries(accountId: string, recordId: string): Promise<number> {
  let n = 0;
  for await (const ref of deliveriesOfRecord(accountId, recordId)) if (await rewriteDeliveryBody(ref, redactEventBody)) n++;
  return n;
}

/**
 * What an activity erased with the contact leaves, before it is deleted: its marker (the stream
 * worker logs and delivers its deletion, and anything still in flight, redacted), then its
 * history and deliveries redacted. Adds to `counts` (safe for activities erased at once).
 */
const eraseActivity = (p: Person, counts: Counts) => async (activityId: string) => {
  await markErased(p.accountId, activityId, p.job.id);
  // Counted after each await: several activities are erased at once (purgeOnlyLinked).
  const events = await redactEvents(p.accountId, activityId);
  counts.events = (counts.events ?? 0) + events;
  const deliveries = await redactDeliveries(p.accountId, activityId);
  counts.deliveries = (counts.deliveries ?? 0) + deliveries;
};

export const STEPS: readonly Step[] = [
  {
    name: 'imports',
    reaches: ['importError'],
    async run(p) {
      let rows = 0;
      const needles = p.values.map((v) => v.toLowerCase());
      for (const job of await allJobs(queryImports, p.accountId)) {
        if (job.object_type !== 'contacts') continue;
        let after: string | undefined;
        for (;;) {
          const errors = await queryRowErrors(p.accountId, job.id, 100, after);
          for (const e of errors) {
            const text = `${e.value} ${e.message}`.toLowerCase();
            if (needles.some((n) => text.includes(n))) {
              await redactRowError(p.accountId, job.id, e.row_number, REDACTED);
              rows++;
            }
          }
          if (errors.length < 100) break;
          after = `E#${String(errors[errors.length - 1]!.row_number).padStart(9, '0')}`;
        }
        if (['completed', 'failed', 'canceled'].includes(job.status) && job.object_key && (await fileHolds(job.object_key, p.email))) {
          await deleteObject(requireEnv(bindingEnv('importsBucket')), job.object_key);
          rows++;
        }
      }
      return { import_rows: rows };
    },
  },
  {
    name: 'exports',
    reaches: [],
    async run(p) {
      let n = 0;
      const now = new Date().toISOString();
      for (const job of await allJobs(queryExports, p.accountId)) {
        if (job.object_type !== 'contacts' || job.status === 'expired' || job.status === 'failed') continue;
        const out = await updateExportItem(p.accountId, job.id, { status: 'expired', updated_at: now, lease_until: 0 }, { statusIn: ['queued', 'processing', 'completed'] });
        if (!out) continue;
        await deleteObject(requireEnv(bindingEnv('exportsBucket')), job.object_key).catch(() => undefined);
        n++;
      }
      return { exports: n };
    },
  },
  {
    name: 'inbound_emails',
    reaches: ['inboundEmail', 'inboundEmailText', 'inboundEmailByAddress'],
    async run(p) {
      const counts: Counts = {};
      const out = await eraseInboundEmailsOf(p.accountId, p.contactId, await addressesOf(p), {
        beforeActivity: eraseActivity(p, counts),
        // Its raw message (and the copies a retried delivery stored) in the inbound bucket.
        beforeEmail: async (email) => {
          for (const key of email.raw_keys ?? []) await deleteObject(requireEnv(bindingEnv('inboundBucket')), key);
        },
      });
      return { ...counts, inbound_emails: out.emails, activities: out.activities };
    },
  },
  {
    name: 'activities',
    reaches: [],
    async run(p) {
      const counts: Counts = {};
      const activities = await purgeOnlyLinked(p.accountId, 'contact', p.contactId, eraseActivity(p, counts));
      return { ...counts, activities };
    },
  },
  {
    name: 'idempotent_answers',
    reaches: ['idempotency'],
    async run(p) {
      let n = 0;
      for (const a of await answersOfRecord(p.accountId, p.contactId)) if (await eraseAnswer(p.accountId, a.operation, a.key, p.contactId)) n++;
      return { idempotent_answers: n };
    },
  },
  {
    name: 'records',
    reaches: ['record', 'indexEntry', 'sortedEntry', 'trash', 'upsertClaim'],
    async run(p) {
      return { records: (await purge(contacts(), p.accountId, p.contactId)) ? 1 : 0 };
    },
  },
  {
    name: 'events',
    reaches: ['eventEntry', 'merge'],
    async run(p) {
      return { events: await redactEvents(p.accountId, p.contactId) };
    },
  },
  {
    name: 'deliveries',
    reaches: ['webhookDelivery'],
    async run(p) {
      return { deliveries: await redactDeliveries(p.accountId, p.contactId) };
    },
  },
  {
    name: 'erased_event',
    reaches: [],
    async run(p) {
      const change: RecordChange = { eventId: `erasure:${p.job.id}`, op: 'erased', type: 'contact', accountId: p.accountId, id: p.contactId, at: p.job.requested_at, actor: p.job.actor };
      const cache = new WebhookBatchCache();
      const payloads = await logChanges([change], cache);
      await enqueueWebhookDeliveries(change, cache, undefined, payloads.get(change.eventId));
      return {};
    },
  },
];

/** Works on one erasure until it is completed. Throws on unexpected errors: the message comes back and the erasure resumes. */
export async function runErasure(message: ErasureMessage, deps: ErasureWorkerDeps = {}): Promise<'completed' | 'skipped'> {
  const job = await getErasureItem(message.account_id, message.erasure_id);
  const lease = job && (await leaseErasure(job, { running: 'pending', leaseMs: deps.leaseMs ?? ERASURE_LEASE_MS }));
  if (!lease) {
    if (job) await clearActiveErasure(job.account_id, job.id);
    return 'skipped';
  }
  const { values, email } = await contactValues(job.account_id, job.contact_id);
  const person: Person = { accountId: job.account_id, contactId: job.contact_id, values, email, job: lease.job };
  for (let i = lease.job.position; i < STEPS.length; i++) {
    const step = STEPS[i]!;
    const counts = await step.run(person);
    await deps.beforeSave?.(step.name);
    const removed = { ...lease.job.removed };
    for (const [k, v] of Object.entries(counts) as [RemovedKind, number][]) removed[k] += v;
    if (!(await lease.save({ position: i + 1, removed }, { position: i }))) {
      await lease.lost();
      return 'skipped';
    }
    await deps.afterStep?.(step.name);
  }
  const done = await lease.end({ status: 'completed', completed_at: new Date().toISOString() }, { position: STEPS.length });
  await clearActiveErasure(job.account_id, job.id);
  return done ? 'completed' : 'skipped';
}
