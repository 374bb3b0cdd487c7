import { getReassignment } from '../../shared/domain/reassignments.js';
import { handle } from '../../shared/http/resource.js';
import { reassignmentsResource } from '../../shared/schemas/resources/reassignments.js';

export const handler = handle(reassignmentsResource, 'get', ({ id }, ctx) => getReassignment(ctx, id));
