import '../../shared/domain/records/stages.js'; // projects move through pipelines (contract §19)
import { batchCreateHandler } from '../../shared/http/idempotent-records.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchCreateHandler(projectEntity);
