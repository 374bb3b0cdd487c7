import { restoreHandler } from '../../shared/http/trash.js';
import { companyEntity } from '../../shared/schemas/entities/index.js';

export const handler = restoreHandler(companyEntity);
