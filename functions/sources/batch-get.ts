import { batchGetHandler } from '../../shared/http/batch.js';
import { sourceEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchGetHandler(sourceEntity);
