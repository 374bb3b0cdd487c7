import { batchUpdateHandler } from '../../shared/http/batch.js';
import { activityEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchUpdateHandler(activityEntity);
