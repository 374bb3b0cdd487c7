import { batchCreateHandler } from '../../shared/http/batch.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchCreateHandler(contactEntity, { wrap: idempotentCreate() });
