import { batchCreateHandler } from '../../shared/http/batch.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { activityEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchCreateHandler(activityEntity, { wrap: idempotentCreate() });
