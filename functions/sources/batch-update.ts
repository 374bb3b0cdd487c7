import { batchUpdateHandler } from '../../shared/http/batch.js';
import { sourceEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchUpdateHandler(sourceEntity);
