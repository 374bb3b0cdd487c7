import { createMember } from '../../shared/domain/members.js';
import { handle } from '../../shared/http/idempotent-resource.js';
import { membersResource } from '../../shared/schemas/resources/members.js';

export const handler = handle(membersResource, 'create', (input, ctx) => createMember(ctx, input));
