import { listTrashed } from '../../shared/domain/trash.js';
import { handle } from '../../shared/http/resource.js';
import { trashResource } from '../../shared/schemas/resources/trash.js';

export const handler = handle(trashResource, 'list', (input, ctx) => listTrashed(ctx, input));
