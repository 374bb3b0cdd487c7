import { batchDeleteHandler } from '../../shared/http/batch.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchDeleteHandler(projectEntity);
