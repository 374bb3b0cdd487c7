import { batchCreateHandler } from '../../shared/http/batch.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchCreateHandler(projectEntity, { wrap: idempotentCreate() });
