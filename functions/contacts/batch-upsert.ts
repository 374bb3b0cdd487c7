import { batchUpsertHandler } from '../../shared/http/idempotent-records.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchUpsertHandler(contactEntity);
