import { batchGetHandler } from '../../shared/http/batch.js';
import { contactEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchGetHandler(contactEntity);
