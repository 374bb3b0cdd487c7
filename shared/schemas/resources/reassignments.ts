/** Reassignments (contract §20): the family's operations, declared once (see ../resource.ts). */
import { CUSTOM_FIELD_KEYS } from '../keys/custom-fields.js';
import {
  parseReassignmentCreate,
  reassignmentCreateInput,
  reassignmentIdInput,
  reassignmentListInput,
  reassignmentListResult,
  reassignmentSchema,
} from '../reassignments.js';
import { BY_ID, defineResource } from '../resource.js';

export const reassignmentsResource = defineResource({
  family: 'reassignments',
  prefix: 'reassignments',
  // Its jobs are items of the index-build store (the custom fields' keys), beside index builds and stage moves.
  keys: CUSTOM_FIELD_KEYS,
  components: {
    Reassignment: reassignmentSchema,
    ReassignmentList: reassignmentListResult,
    ReassignmentCreateInput: reassignmentCreateInput,
    ReassignmentIdInput: reassignmentIdInput,
    ReassignmentListInput: reassignmentListInput,
  },
  operations: {
    create: {
      access: 'write',
      idempotent: true,
      bindings: { indexBuildsQueue: 'send' },
      summary: "Hand a member's records on to another member (or leave them unowned)",
      description:
        'Starts a job (status `queued`, then `running`, then `completed`; poll `reassignments-get`). Every record of the `types` families whose owner is `from_owner_id` (contacts, companies, projects: `owner_id`; activities: `assignee_id`) gets `to_owner_id` through the normal write path: a `*.updated` event each, actor `{ "type": "reassignment", "id": <this job\'s id> }`. ' +
        'The write is conditional on the owner the job read: a record whose owner changed meanwhile is kept (counted in `processed`, not in `changed`). Progress is saved after each page; a job whose worker dies resumes where it was, and an account runs one such job at a time (with its index builds and stage moves), so other accounts are not held up. ' +
        '`from_owner_id` must be a member of the account (active or deactivated) and `to_owner_id` an active member other than it, or null; else 400 `reassignments.invalid_request` naming the field, and nothing starts.',
      input: reassignmentCreateInput,
      result: reassignmentSchema,
      parse: parseReassignmentCreate,
    },
    get: {
      access: 'read',
      summary: 'Get a reassignment: status and progress (processed, changed)',
      input: reassignmentIdInput,
      result: reassignmentSchema,
      body: BY_ID,
    },
    list: {
      access: 'read',
      summary: 'List reassignments, newest first (cursor pagination), those members-deactivate started included',
      description: '`limit` 1–100 (default 25).',
      input: reassignmentListInput,
      result: reassignmentListResult,
    },
  },
});
