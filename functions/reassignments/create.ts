import { createReassignment } from '../../shared/domain/reassignments.js';
import { handle } from '../../shared/http/idempotent-resource.js';
import { enqueueIndexBuild } from '../../shared/indexing/storage.js';
import { reassignmentsResource } from '../../shared/schemas/resources/reassignments.js';

// The job runs on the index-build queue (shared/indexing/reassignments.ts).
export const handler = handle(reassignmentsResource, 'create', (input, ctx) => createReassignment(ctx, input, enqueueIndexBuild));
