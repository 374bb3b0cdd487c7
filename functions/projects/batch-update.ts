import '../../shared/domain/records/stages.js'; // projects move through pipelines (contract §19)
import { batchUpdateHandler } from '../../shared/http/batch.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchUpdateHandler(projectEntity);
