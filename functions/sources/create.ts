import { idempotentCreate } from '../../shared/http/idempotency.js';
import { createHandler } from '../../shared/http/crud.js';
import { sourceEntity } from '../../shared/schemas/entities/index.js';

export const handler = createHandler(sourceEntity, { wrap: idempotentCreate() });
