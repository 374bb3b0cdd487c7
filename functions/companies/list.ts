import { listHandler } from '../../shared/http/crud.js';
import { companyEntity } from '../../shared/schemas/entities/index.js';

export const handler = listHandler(companyEntity);
