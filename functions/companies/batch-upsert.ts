import { batchUpsertHandler } from '../../shared/http/batch.js';
import { idempotentCreate } from '../../shared/http/idempotency.js';
import { companyEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchUpsertHandler(companyEntity, { wrap: idempotentCreate() });
