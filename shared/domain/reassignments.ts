/**
 * Reassignments (contract §20): create, get, list. A reassignment is a job of the index-build
 * queue and its store (a job that rewrites an account's existing records, as index builds and
 * stage moves: shared/indexing/reassignments.ts runs it); here its checks, its item and its message. Nothing is written unless the members
 * check out: `from_owner_id` a member of the account (active or deactivated), `to_owner_id` null
 * or an active member other than it.
 */
import { randomUUID } from 'node:crypto';
import { getMemberItem } from '../db/members.js';
import { getReassignmentItem, insertIndexBuild, queryReassignments, type Reassignment as ReassignmentItem } from '../db/index-builds.js';
import { type ErrorDetail, invalidRequest, notFound } from '../errors.js';
import type { Reassignment, ReassignmentCreate, ReassignmentListInput } from '../schemas/reassignments.js';
import type { OperationContext } from './context.js';
import { cursorScope, listPosition, type Page } from './listing.js';

const FAMILY = 'reassignments';

/** Sends the job's message to the index-build queue (the handler passes it: shared/indexing/storage.ts). */
export type EnqueueJob = (message: { account_id: string; build_id: string }) => Promise<unknown>;

/** The API view: the job's `processing` is `running`. */
const toApi = (item: ReassignmentItem): Reassignment => ({
  id: item.id,
  status: item.status === 'processing' ? 'running' : item.status === 'completed' ? 'completed' : 'queued',
  from_owner_id: item.from_owner_id,
  to_owner_id: item.to_owner_id,
  types: item.types,
  processed: item.processed,
  changed: item.changed,
  created_at: item.created_at,
  completed_at: item.completed_at ?? null,
});

/** Why `to` cannot take the records over (undefined: it can): null, or an active member of the account other than `from`. */
export async function refusedTarget(accountId: string, from: string, to: string | null): Promise<string | undefined> {
  if (to === null) return undefined;
  if (to === from) return 'is the member whose records are handed on';
  const member = await getMemberItem(accountId, to);
  if (!member) return 'is not a member of the account';
  return member.status === 'active' ? undefined : 'is a deactivated member';
}

/** Inserts the job (status `queued`) and sends its message; the members were checked by the caller. */
export async function queueReassignment(ctx: OperationContext, input: ReassignmentCreate, enqueue: EnqueueJob): Promise<Reassignment> {
  const item: ReassignmentItem = {
    id: randomUUID(),
    account_id: ctx.accountId,
    created_by: ctx.userId,
    status: 'queued',
    from_owner_id: input.from_owner_id,
    to_owner_id: input.to_owner_id,
    types: input.types,
    action: 'reassign',
    processed: 0,
    changed: 0,
    created_at: new Date().toISOString(),
    position: 0,
    done: 0,
    type_index: 0,
  };
  await insertIndexBuild(item);
  await enqueue({ account_id: ctx.accountId, build_id: item.id });
  return toApi(item);
}

export async function createReassignment(ctx: OperationContext, input: ReassignmentCreate, enqueue: EnqueueJob): Promise<Reassignment> {
  const [from, refused] = await Promise.all([getMemberItem(ctx.accountId, input.from_owner_id), refusedTarget(ctx.accountId, input.from_owner_id, input.to_owner_id)]);
  const details: ErrorDetail[] = [];
  if (!from) details.push({ path: 'from_owner_id', message: 'is not a member of the account' });
  if (refused) details.push({ path: 'to_owner_id', message: refused });
  if (details.length) {
    throw invalidRequest(FAMILY, 'from_owner_id must be a member of the account, to_owner_id an active member other than it or null', details);
  }
  return queueReassignment(ctx, input, enqueue);
}

export async function getReassignment(ctx: OperationContext, id: string): Promise<Reassignment> {
  const item = await getReassignmentItem(ctx.accountId, id);
  if (!item) throw notFound(FAMILY, 'reassignment');
  return toApi(item);
}

/** reassignments-list: the account's reassignments, newest first. */
export async function listReassignments(ctx: OperationContext, input: ReassignmentListInput): Promise<Page<Reassignment>> {
  const { after, next } = await cursorScope(ctx, FAMILY, input.cursor, {});
  const items = await queryReassignments(ctx.accountId, input.limit + 1, after);
  const page = items.slice(0, input.limit);
  const last = page[page.length - 1];
  return { items: page.map((i) => toApi(i)), next_cursor: next(items.length > input.limit && last ? listPosition(last) : undefined) };
}
