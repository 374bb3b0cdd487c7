/** Members of an account (contract §20): the family's operations, declared once (see ../resource.ts). */
import { idOnlyInput } from '../common.js';
import { MEMBER_KEYS } from '../keys/members.js';
import {
  MEMBER_READ_ONLY,
  memberCreateInput,
  memberDeactivateInput,
  memberListInput,
  memberListResult,
  memberSchema,
  memberUpdateInput,
  parseMemberCreate,
  parseMemberDeactivate,
  parseMemberUpdate,
} from '../members.js';
import { BY_ID, defineResource } from '../resource.js';

const BY_ID_ERRORS = ['members.invalid_id', 'members.not_found'] as const;

export const membersResource = defineResource({
  family: 'members',
  prefix: 'members',
  keys: MEMBER_KEYS,
  components: {
    Member: memberSchema,
    MemberList: memberListResult,
    MemberCreateInput: memberCreateInput,
    MemberUpdateInput: memberUpdateInput,
    MemberDeactivateInput: memberDeactivateInput,
  },
  operations: {
    create: {
      access: 'write',
      idempotent: true,
      summary: 'Add a member (a person of the account)',
      description:
        'The email is stored as given (trimmed) and is unique in the account case-insensitively: an address another member has (deactivated ones included) is 409 `members.conflict`, also under concurrent creates. At most 1,000 members per account (`members.limit_exceeded`).',
      input: memberCreateInput,
      result: memberSchema,
      errors: ['members.limit_exceeded'],
      parse: parseMemberCreate,
    },
    get: { access: 'read', summary: 'Get a member (active or deactivated)', input: idOnlyInput, result: memberSchema, body: BY_ID, errors: BY_ID_ERRORS },
    list: {
      access: 'read',
      summary: 'List the account\'s members by name (case- and accent-insensitively), then id; cursor pagination',
      description: '`status` keeps only the active or the deactivated members. `limit` 1–100 (default 25).',
      input: memberListInput,
      result: memberListResult,
    },
    update: {
      access: 'write',
      summary: 'Rename a member or change its email',
      description: 'An email another member has (case-insensitively) is 409 `members.conflict`. An update that changes nothing leaves `updated_at`.',
      input: memberUpdateInput,
      result: memberSchema,
      errors: ['members.conflict'],
      parse: parseMemberUpdate,
    },
    deactivate: {
      access: 'write',
      summary: 'Deactivate a member: it stays readable and keeps its email',
      description:
        'Returns the member with `status` deactivated and `deactivated_at`; deactivating a deactivated member returns it unchanged. ' +
        '`reassign_to` (an active member of the account other than this one, or null; else 400 `members.invalid_request` and nothing changes) hands the member\'s records of every family on to it, or leaves them unowned, as `reassignments-create` does: the job (status, progress) is the newest of `reassignments-list` with this member as `from_owner_id`.',
      bindings: { indexBuildsQueue: 'send' },
      input: memberDeactivateInput,
      result: memberSchema,
      errors: [...BY_ID_ERRORS, 'members.conflict'],
      parse: parseMemberDeactivate,
    },
    reactivate: {
      access: 'write',
      summary: 'Make a deactivated member active again',
      description: 'Returns the member with `status` active and `deactivated_at` null; an active member is returned unchanged.',
      input: idOnlyInput,
      result: memberSchema,
      errors: [...BY_ID_ERRORS, 'members.conflict'],
      body: { ids: ['id'], readOnly: MEMBER_READ_ONLY },
    },
  },
});
