/**
 * Members of an account (contract §20): the bodies, the member's API shape, and the rules of its
 * fields (`memberEmailKey`, `memberNameKey`: pure, held by test/unit/member-rules.test.ts).
 */
import * as v from 'valibot';
import { type ErrorDetail, invalidRequest } from '../errors.js';
import { normalize } from '../search/tokenize.js';
import { cursorString, detailsSummary, issuesToDetails, limitInteger, rejectUnknownFields, requireId } from './common.js';

export const MEMBER_STATUSES = ['active', 'deactivated'] as const;
export type MemberStatus = (typeof MEMBER_STATUSES)[number];
export const MAX_MEMBERS = 1000;
export const MAX_MEMBER_NAME = 200;

const d = <S extends v.GenericSchema>(schema: S, description: string, example?: unknown) =>
  v.pipe(schema, v.metadata({ description, ...(example !== undefined ? { examples: [example] } : {}) }));
const uuid = v.pipe(v.string(), v.uuid('must be a UUID'));
const MEMBER_ID_EXAMPLE = '7b3e2a1c-5d4f-4e6a-8b9c-0d1e2f3a4b5c';

const doc = {
  id: 'Unique identifier of the member',
  email: 'Email address, at most 254 characters, stored as given (trimmed); unique in the account, case-insensitively',
  name: 'Name, 1–200 characters after trimming',
  status: 'active, or deactivated (members-deactivate; members-reactivate makes it active again)',
  deactivatedAt: 'When the member was deactivated; null while active',
  reassignTo: 'Who takes over the member\'s records (a reassignment of every family, in reassignments-list): an active member of the account other than this one, or null to leave them unowned',
};

const EMAIL_RE = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const memberEmail = d(
  v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be blank'), v.maxLength(254, 'must be at most 254 characters'), v.check((s) => EMAIL_RE.test(s) && v.is(v.pipe(v.string(), v.email()), s), 'must be a valid email address')),
  doc.email,
  'ada@example.com',
);
const memberName = d(v.pipe(v.string(), v.trim(), v.minLength(1, 'must not be blank'), v.maxLength(MAX_MEMBER_NAME, `must be at most ${MAX_MEMBER_NAME} characters`)), doc.name, 'Ada Lovelace');
const memberId = (description: string) => d(uuid, description, MEMBER_ID_EXAMPLE);

// --- inputs -------------------------------------------------------------------------------------

export const memberCreateInput = v.strictObject({ email: memberEmail, name: memberName });
export type MemberCreate = v.InferOutput<typeof memberCreateInput>;

export const memberUpdateInput = v.strictObject({ id: memberId('Id of the member'), email: v.optional(memberEmail), name: v.optional(memberName) });
export type MemberUpdate = v.InferOutput<typeof memberUpdateInput>;

export const memberDeactivateInput = v.strictObject({
  id: memberId('Id of the member'),
  reassign_to: v.optional(d(v.nullable(v.pipe(v.string('must be a member id or null'), v.uuid('must be a UUID or null'))), doc.reassignTo, null)),
});
export type MemberDeactivate = v.InferOutput<typeof memberDeactivateInput>;

export const memberListInput = v.strictObject({
  cursor: v.optional(d(cursorString, 'The `next_cursor` of the previous page (opaque)')),
  limit: v.optional(d(limitInteger, 'Members per page, 1–100 (default 25)', 25)),
  status: v.optional(d(v.picklist(MEMBER_STATUSES, 'must be active or deactivated'), 'Only the members of this status', 'active')),
});
export type MemberListInput = v.InferOutput<typeof memberListInput>;

// --- output -------------------------------------------------------------------------------------

const timestamp = (description: string) => d(v.pipe(v.string(), v.isoTimestamp()), description, '2026-11-22T01:16:30.123Z');

export const memberSchema = v.object({
  id: memberId(doc.id),
  email: d(v.string(), doc.email, 'ada@example.com'),
  name: d(v.string(), doc.name, 'Ada Lovelace'),
  status: d(v.picklist(MEMBER_STATUSES), doc.status, 'active'),
  created_at: timestamp('Creation timestamp (ISO 8601 UTC)'),
  updated_at: timestamp('Last update timestamp (ISO 8601 UTC)'),
  deactivated_at: d(v.nullable(v.pipe(v.string(), v.isoTimestamp())), doc.deactivatedAt, null),
});
export type Member = v.InferOutput<typeof memberSchema>;

export const memberListResult = v.object({
  items: v.array(memberSchema),
  next_cursor: d(v.string(), 'Pass as `cursor` for the next page; "" on the last page', ''),
});

/** Fields of a member a client may not set (named `field is read-only`). */
export const MEMBER_READ_ONLY = ['status', 'created_at', 'updated_at', 'deactivated_at', 'account_id'] as const;

// --- the field rules ----------------------------------------------------------------------------

/** An address as compared for uniqueness (the claim's key): trimmed, lowercased. */
export const memberEmailKey = (email: string): string => email.trim().toLowerCase();

/** How long the folded name of a sort key may be (a sort key holds at most 1,024 bytes; it is followed by the id). */
const NAME_KEY_BYTES = 900;

/**
 * A member's place in members-list: its name folded (case- and accent-insensitively) then its id,
 * after a U+0001 (below every character a folded name sorts by), so that a name before another
 * sorts before it whatever their ids. The fold is cut to fit a sort key (a cut name then sorts by
 * id among the names it shares its first 900 bytes with).
 */
export function memberNameKey(name: string, id: string): string {
  let folded = [...normalize(name.trim())].map((c) => (c <= '\u0001' ? ' ' : c)).join('');
  while (Buffer.byteLength(folded) > NAME_KEY_BYTES) folded = folded.slice(0, -1).replace(/[\uD800-\uDBFF]$/, '');
  return `${folded}\u0001${id}`;
}

/** Sort keys in DynamoDB's order (their UTF-8 bytes), not UTF-16's. */
export const compareSortKeys = (a: string, b: string): number => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

function fail(details: ErrorDetail[]): never {
  throw invalidRequest('members', detailsSummary(details), details);
}

/** Checks a schema, every issue a detail. */
function check<S extends v.GenericSchema>(schema: S, body: unknown): v.InferOutput<S> {
  const out = v.safeParse(schema, body);
  if (!out.success) fail(issuesToDetails(out.issues));
  return out.output;
}

/** The bodies in the contract's order: unknown and read-only fields, the id, the types. */
export function parseMemberCreate(body: Record<string, unknown>): MemberCreate {
  rejectUnknownFields('members', body, { allowed: Object.keys(memberCreateInput.entries), readOnly: ['id', ...MEMBER_READ_ONLY] });
  return check(memberCreateInput, body);
}

export function parseMemberUpdate(body: Record<string, unknown>): MemberUpdate {
  rejectUnknownFields('members', body, { allowed: Object.keys(memberUpdateInput.entries), readOnly: MEMBER_READ_ONLY });
  const id = requireId('members', body);
  return { ...check(memberUpdateInput, body), id };
}

export function parseMemberDeactivate(body: Record<string, unknown>): MemberDeactivate {
  rejectUnknownFields('members', body, { allowed: Object.keys(memberDeactivateInput.entries), readOnly: MEMBER_READ_ONLY });
  const id = requireId('members', body);
  const input = check(memberDeactivateInput, body);
  return { ...input, id, ...(typeof input.reassign_to === 'string' ? { reassign_to: input.reassign_to.toLowerCase() } : {}) };
}
