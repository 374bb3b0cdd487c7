import { createHandler } from '../../shared/http/idempotent-records.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';

export const handler = createHandler(contactEntity);
