import { batchUpdateHandler } from '../../shared/http/batch.js';
import { companyEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchUpdateHandler(companyEntity);
