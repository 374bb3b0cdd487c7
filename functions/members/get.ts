import { getMember } from '../../shared/domain/members.js';
import { handle } from '../../shared/http/resource.js';
import { membersResource } from '../../shared/schemas/resources/members.js';

export const handler = handle(membersResource, 'get', ({ id }, ctx) => getMember(ctx, id));
