import { createHandler } from '../../shared/http/idempotent-records.js';
import { sourceEntity } from '../../shared/schemas/entities/index.js';

export const handler = createHandler(sourceEntity);
