/** Erasures (contract §18): create, get, list. The work itself is the worker's (./worker.ts), fed by the erasure queue. */
import { randomUUID } from 'node:crypto';
import { erasureOfContact, type ErasureItem, getErasureItem, insertErasure, queryErasures } from '../db/erasures.js';
import { recordReads } from '../db/record-store.js';
import { emailHash } from '../db/suppression.js';
import { getTrash } from '../db/trash.js';
import { actorOf, type OperationContext } from '../domain/context.js';
import { cursorScope, listPosition } from '../domain/listing.js';
import { notFound } from '../errors.js';
import { type ErasureCreateInput, type ErasureListInput, type ErasureRecord, noneRemoved } from '../schemas/erasures.js';
import { enqueueErasure } from './storage.js';

export const erasureToApi = (item: ErasureItem): ErasureRecord => ({
  id: item.id,
  contact_id: item.contact_id,
  status: item.status,
  suppress_email: item.suppress_email,
  removed: item.removed,
  requested_at: item.requested_at,
  completed_at: item.completed_at,
});

export async function createErasure(ctx: OperationContext, input: ErasureCreateInput): Promise<ErasureRecord> {
  const live = await recordReads('contact').get(ctx.accountId, input.contact_id);
  const record = live ?? (await getTrash(ctx.accountId, 'contact', input.contact_id))?.record;
  if (!record) {
    // Erased already (the record is gone, the erasure stays): the first erasure.
    const existing = await erasureOfContact(ctx.accountId, input.contact_id);
    const item = existing && (await getErasureItem(ctx.accountId, existing));
    // (An activity erased with a contact carries the contact's erasure: not this id's.)
    if (item && item.contact_id === input.contact_id) return erasureToApi(item);
    throw notFound('erasures', 'contact');
  }
  const now = new Date().toISOString();
  const item: ErasureItem & { actor: unknown } = {
    id: randomUUID(),
    account_id: ctx.accountId,
    created_by: ctx.userId,
    contact_id: input.contact_id,
    status: 'pending',
    suppress_email: input.suppress_email,
    removed: noneRemoved(),
    requested_at: now,
    created_at: now,
    completed_at: null,
    position: 0,
    actor: actorOf(ctx),
  };
  const email = typeof record.email === 'string' ? record.email : '';
  const out = await insertErasure(item, input.suppress_email && email ? await emailHash(email) : undefined);
  if (!out.inserted) {
    const first = await getErasureItem(ctx.accountId, out.existingId);
    if (first) return erasureToApi(first);
  }
  await enqueueErasure({ account_id: ctx.accountId, erasure_id: item.id });
  return erasureToApi(item);
}

export async function getErasure(ctx: OperationContext, id: string): Promise<ErasureRecord> {
  const item = await getErasureItem(ctx.accountId, id);
  if (!item) throw notFound('erasures', 'erasure');
  return erasureToApi(item);
}

/** erasures-list: the account's erasures, newest first. */
export async function listErasures(ctx: OperationContext, input: ErasureListInput): Promise<{ items: ErasureRecord[]; next_cursor: string }> {
  const { after, next } = await cursorScope(ctx, 'erasures', input.cursor, {});
  const items = await queryErasures(ctx.accountId, input.limit + 1, after);
  const page = items.slice(0, input.limit);
  const last = page[page.length - 1];
  return { items: page.map(erasureToApi), next_cursor: next(items.length > input.limit && last ? listPosition(last) : undefined) };
}
