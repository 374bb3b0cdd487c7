import { deactivateMember } from '../../shared/domain/members.js';
import { handle } from '../../shared/http/resource.js';
import { enqueueIndexBuild } from '../../shared/indexing/storage.js';
import { membersResource } from '../../shared/schemas/resources/members.js';

// With reassign_to, the member's records are handed on by a reassignment (shared/indexing/reassignments.ts).
export const handler = handle(membersResource, 'deactivate', (input, ctx) => deactivateMember(ctx, input, enqueueIndexBuild));
