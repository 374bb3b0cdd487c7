/**
 * Erasures (contract §18). One item per job (sk `ERA`), listed newest first on GSI1, moved by
 * the job store's conditional updates (status, saved position, worker lease: shared/db/jobs.ts);
 * one marker per erased contact (`keys.erasureOfContact`), written in the create transaction, so
 * a second erasure of the same contact finds the first and the stream worker knows a contact is
 * being erased (and one per activity erased with it, written before the activity is deleted:
 * `markErased`); and a suppressed email's keyed hash (`keys.suppressedEmail`).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ErasureStatus, Removed } from '../schemas/erasures.js';
import { db, tableName } from './client.js';
import { notExists, transact } from './expr.js';
import { batchGetItems } from './items.js';
import { leaseJob, type LeaseTerms, recoverableJobs } from './job-lease.js';
import { jobStore } from './jobs.js';
import { keys } from './table.js';

export interface ErasureItem {
  id: string;
  account_id: string;
  created_by: string;
  contact_id: string;
  status: ErasureStatus;
  suppress_email: boolean;
  removed: Removed;
  requested_at: string;
  /** = requested_at (the job store's list order). */
  created_at: string;
  completed_at: string | null;
  /** The next step to run (shared/erasures/worker.ts): a resumed worker starts there. */
  position: number;
  lease_owner?: string;
  lease_until?: number;
}

const store = jobStore<ErasureItem, 'erasure_id'>({
  job: keys.erasureJob,
  gsi: keys.erasureGsi,
  listPartition: keys.erasureListPartition,
  active: keys.activeErasure,
  activePartition: keys.activeErasuresPartition,
  activeIdAttr: 'erasure_id',
});

export const getErasureItem = store.get;
export const queryErasures = store.query;
/** Takes an erasure for one worker (shared/db/job-lease.ts). */
export const leaseErasure = (job: ErasureItem, terms: LeaseTerms<ErasureItem, ErasureStatus>) => leaseJob(store, job, terms);
/** Local mode's recovery of lost messages (shared/imports/recover.ts): a pending erasure is a running job. */
export const erasureRecovery = () => recoverableJobs<ErasureItem, ErasureStatus>(store, { running: 'pending' });
export const clearActiveErasure = store.clearActive;

/**
 * Inserts the erasure, its contact's marker, its active marker and (with `suppressHash`) the
 * suppressed email in one transaction. When the contact already has an erasure, nothing is
 * written and that erasure's id is returned.
 */
export async function insertErasure(item: ErasureItem, suppressHash?: string): Promise<{ inserted: true } | { inserted: false; existingId: string }> {
  const T = tableName();
  const refused = await transact([
    { Put: { TableName: T, Item: { ...keys.erasureOfContact(item.account_id, item.contact_id), erasure_id: item.id }, ...notExists() } },
    { Put: { TableName: T, Item: { ...keys.erasureJob(item.account_id, item.id), ...keys.erasureGsi(item.account_id, item.created_at, item.id), ...item }, ...notExists() } },
    { Put: { TableName: T, Item: { ...keys.activeErasure(item.account_id, item.id), account_id: item.account_id, erasure_id: item.id } } },
    ...(suppressHash ? [{ Put: { TableName: T, Item: { ...keys.suppressedEmail(item.account_id, suppressHash), erasure_id: item.id } } }] : []),
  ]);
  if (!refused) return { inserted: true };
  if (refused.at[0] !== 0) throw refused.error;
  const existing = await erasureOfContact(item.account_id, item.contact_id);
  if (!existing) throw refused.error;
  return { inserted: false, existingId: existing };
}

/** The erasure of a contact, if one was requested. */
export async function erasureOfContact(accountId: string, contactId: string): Promise<string | undefined> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: keys.erasureOfContact(accountId, contactId), ConsistentRead: true }));
  return typeof out.Item?.erasure_id === 'string' ? out.Item.erasure_id : undefined;
}

/**
 * Marks a record erased with a contact (an activity of its only, contract §18): the stream worker
 * then logs and delivers its changes, its deletion included, redacted. Idempotent.
 */
export async function markErased(accountId: string, recordId: string, erasureId: string): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.erasureOfContact(accountId, recordId), erasure_id: erasureId } }));
}

/** Which of these contacts of an account are erased or being erased (one BatchGetItem per 100). */
export async function erasedAmong(accountId: string, contactIds: readonly string[]): Promise<Set<string>> {
  if (contactIds.length === 0) return new Set();
  const items = await batchGetItems(contactIds.map((id) => keys.erasureOfContact(accountId, id)), { consistent: true });
  const erased = new Set<string>();
  for (const item of items) {
    const id = contactIds.find((c) => keys.erasureOfContact(accountId, c).pk === item.pk);
    if (id) erased.add(id);
  }
  return erased;
}

