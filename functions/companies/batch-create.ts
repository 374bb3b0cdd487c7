import { batchCreateHandler } from '../../shared/http/idempotent-records.js';
import { companyEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchCreateHandler(companyEntity);
