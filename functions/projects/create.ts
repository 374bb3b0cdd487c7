import { idempotentCreate } from '../../shared/http/idempotency.js';
import { createHandler } from '../../shared/http/crud.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = createHandler(projectEntity, { wrap: idempotentCreate() });
