import { clearOverride, overrideAttr, readMeta, type RefKind } from '../db/meta.js';
import { getRecord, queryPartition, updateRecord } from '../db/records.js';
import { keys } from '../db/table.js';
import { contactModel } from '../domain/contacts.js';
import type { RecordChange } from './changes.js';

const FIELDS = {
  company: { id: 'company_id', name: 'company_name', index: 'c#' },
  source: { id: 'source_id', name: 'source_name', index: 's#' },
} as const;

async function contactIdsOf(kind: RefKind, accountId: string, refId: string): Promise<string[]> {
  const entries = await queryPartition<{ id: string }>(keys.indexPartition(accountId, 'contact', `${FIELDS[kind].index}${refId}`), { projection: 'id' });
  return entries.map((e) => String(e.id));
}

/**
 * Brings the contacts of a renamed or deleted company/source up to date: their stored name and
 * search entries (rename), or their link (deletion). Idempotent; when done it removes the meta
 * override that kept reads current meanwhile.
 */
export async function fanOutReference(kind: RefKind, accountId: string, refId: string): Promise<number> {
  const ref = await getRecord(kind, accountId, refId);
  const meta = await readMeta(accountId);
  const pending = meta.overrides.get(overrideAttr(kind, refId));
  const f = FIELDS[kind];
  let changed = 0;
  for (const contactId of await contactIdsOf(kind, accountId, refId)) {
    const updated = await updateRecord(contactModel, {
      accountId,
      id: contactId,
      compute: (current) => {
        if (current[f.id] !== refId) return undefined;
        return ref ? { set: { [f.name]: ref.name } } : { set: { [f.id]: null, [f.name]: '' } };
      },
    });
    if (updated) changed++;
  }
  if (pending && (ref ? pending.name === ref.name : pending.name === null)) await clearOverride(accountId, kind, refId, pending.v);
  return changed;
}

/** Projections kept by the stream worker (the webhook pipeline consumes the same changes). */
export async function applyProjections(change: RecordChange): Promise<void> {
  if (change.type !== 'company' && change.type !== 'source') return;
  const renamed = change.op === 'updated' && change.old?.name !== change.new?.name;
  if (renamed || change.op === 'deleted') await fanOutReference(change.type, change.accountId, change.id);
}
