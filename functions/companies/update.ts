import { updateHandler } from '../../shared/http/crud.js';
import { companyEntity } from '../../shared/schemas/entities/index.js';

export const handler = updateHandler(companyEntity);
