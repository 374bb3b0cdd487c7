/**
 * Members of an account (contract §20): the rules of create, get, list, update, deactivate and
 * reactivate over the data layer's items (shared/db/members.ts). The body's own rules (types,
 * address, name) are the parse's (shared/schemas/members.ts); here: the account's limit, one
 * member per address (case-insensitively), versions, and the order of the list.
 */
import { randomUUID } from 'node:crypto';
import { untilAnswered } from '../backoff.js';
import { getMemberItem, type MemberItem, memberCount, memberIdByEmail, membersByName, putMember, replaceMember } from '../db/members.js';
import { setOverrideItem } from '../db/meta.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { compareSortKeys, MAX_MEMBERS, type Member, type MemberCreate, type MemberDeactivate, type MemberListInput, type MemberStatus, type MemberUpdate, MEMBER_STATUSES, memberSchema } from '../schemas/members.js';
import { apiShape } from '../schemas/resource.js';
import type { OperationContext } from './context.js';
import { cursorScope, DEFAULT_LIMIT, type Page } from './listing.js';

const FAMILY = 'members';
/** Attempts of a write that lost a race (another write of the member, a concurrent transaction) before `members.conflict`. */
const ATTEMPTS = 12;

const toApi: (item: object) => Member = apiShape(memberSchema);

const conflict = (message: string, details?: { path: string; message: string }[]) => new ApiError(`${FAMILY}.conflict`, message, details);
const limitExceeded = () => new ApiError(`${FAMILY}.limit_exceeded`, `an account has at most ${MAX_MEMBERS} members`, [{ path: 'email', message: `the account has ${MAX_MEMBERS} members already` }]);

/** The address is another member's: 409 naming it (when it still holds it). */
async function emailTaken(ctx: OperationContext, email: string): Promise<ApiError | undefined> {
  const holder = await memberIdByEmail(ctx.accountId, email);
  if (holder === undefined) return undefined; // released meanwhile: try again
  return conflict(`another member of the account has the email ${email} (addresses are compared case-insensitively)`, [{ path: 'email', message: `is the email of member ${holder}` }]);
}

/** Runs `attempt` until it answers (undefined: it lost a race); `members.conflict` past the bound. */
const retried = <T>(attempt: () => Promise<T | undefined>): Promise<T> => untilAnswered(attempt, ATTEMPTS, () => conflict('the member changed concurrently; try again'));

async function current(ctx: OperationContext, id: string): Promise<MemberItem> {
  const item = await getMemberItem(ctx.accountId, id);
  if (!item) throw notFound(FAMILY, 'member');
  return item;
}

export async function createMember(ctx: OperationContext, input: MemberCreate): Promise<Member> {
  return retried(async () => {
    const now = new Date().toISOString();
    const item: MemberItem = { id: randomUUID(), account_id: ctx.accountId, email: input.email, name: input.name, status: 'active', created_at: now, updated_at: now, deactivated_at: null, ver: 1 };
    const refused = await putMember(item, MAX_MEMBERS);
    if (!refused) return toApi(item);
    if (refused === 'email') {
      const taken = await emailTaken(ctx, input.email);
      if (taken) throw taken;
    }
    if (refused === 'head' && (await memberCount(ctx.accountId)) >= MAX_MEMBERS) throw limitExceeded();
    return undefined;
  });
}

export const getMember = async (ctx: OperationContext, id: string): Promise<Member> => toApi(await current(ctx, id));

/** Writes `change(member)` unless it changes nothing; `updated_at` and `ver` move with the write. */
function changeMember(ctx: OperationContext, id: string, change: (m: MemberItem, now: string) => Partial<MemberItem> | undefined): Promise<Member> {
  return retried(async () => {
    const before = await current(ctx, id);
    const now = new Date().toISOString();
    const fields = change(before, now);
    if (!fields || Object.entries(fields).every(([k, v]) => before[k as keyof MemberItem] === v)) return toApi(before);
    const next: MemberItem = { ...before, ...fields, updated_at: now, ver: before.ver + 1 };
    // A rename shows at once as the owner_name / assignee_name of its records (contract §20): a
    // META override, removed by the stream's fan-out once they carry the new name.
    const renamed = next.name !== before.name ? [setOverrideItem(ctx.accountId, 'member', id, next.name, next.ver)] : [];
    const refused = await replaceMember(before, next, renamed);
    if (!refused) return toApi(next);
    if (refused === 'email') {
      const taken = await emailTaken(ctx, next.email);
      if (taken) throw taken;
    }
    return undefined;
  });
}

export function updateMember(ctx: OperationContext, input: MemberUpdate): Promise<Member> {
  return changeMember(ctx, input.id, () => ({
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.email !== undefined ? { email: input.email } : {}),
  }));
}

/**
 * Deactivates a member (an already deactivated one is returned unchanged). `reassign_to`, when
 * sent, is checked (null, or an active member of the account other than this one), then refused:
 * handing records on is not available yet, and nothing is written.
 */
export async function deactivateMember(ctx: OperationContext, input: MemberDeactivate): Promise<Member> {
  if (input.reassign_to !== undefined) {
    await current(ctx, input.id);
    if (input.reassign_to !== null) {
      const to = input.reassign_to === input.id ? undefined : await getMemberItem(ctx.accountId, input.reassign_to);
      if (to?.status !== 'active') {
        throw invalidRequest(FAMILY, 'reassign_to must be an active member of the account other than this one, or null', [
          { path: 'reassign_to', message: input.reassign_to === input.id ? 'is the member being deactivated' : to ? 'is a deactivated member' : 'is not a member of the account' },
        ]);
      }
    }
    throw invalidRequest(FAMILY, 'reassign_to: reassignments are not available yet (deactivate without reassign_to: the member keeps its records)', [
      { path: 'reassign_to', message: 'reassignments are not available yet' },
    ]);
  }
  return changeMember(ctx, input.id, (m, now) => (m.status === 'deactivated' ? undefined : { status: 'deactivated', deactivated_at: now }));
}

export function reactivateMember(ctx: OperationContext, id: string): Promise<Member> {
  return changeMember(ctx, id, (m) => (m.status === 'active' ? undefined : { status: 'active', deactivated_at: null }));
}

/**
 * A page of members by name (folded: case- and accent-insensitively), then id. One status reads
 * its partition of name entries; both read each one's next `limit + 1` entries and merge them.
 */
export async function listMembers(ctx: OperationContext, input: MemberListInput): Promise<Page<Member>> {
  const limit = input.limit ?? DEFAULT_LIMIT;
  const scope = await cursorScope(ctx, FAMILY, input.cursor, { status: input.status ?? null });
  const statuses: readonly MemberStatus[] = input.status ? [input.status] : MEMBER_STATUSES;
  const found = (await Promise.all(statuses.map((s) => membersByName(ctx.accountId, s, scope.after, limit + 1)))).flat();
  found.sort((a, b) => compareSortKeys(a.at, b.at));
  const items = found.slice(0, limit);
  const next = found.length > limit ? items[items.length - 1]!.at : undefined;
  return { items: items.map(toApi), next_cursor: scope.next(next) };
}

/** The member holding an address (compared case-insensitively), if any: an import row's owner named by email (contract §20). */
export async function memberByEmail(accountId: string, email: string): Promise<Pick<MemberItem, 'id' | 'status'> | undefined> {
  const id = await memberIdByEmail(accountId, email);
  return id === undefined ? undefined : getMemberItem(accountId, id);
}
