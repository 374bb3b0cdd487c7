import { batchDeleteHandler } from '../../shared/http/batch.js';
import { sourceEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchDeleteHandler(sourceEntity);
