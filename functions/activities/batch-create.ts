import { batchCreateHandler } from '../../shared/http/idempotent-records.js';
import { activityEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchCreateHandler(activityEntity);
