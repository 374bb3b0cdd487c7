import '../../shared/domain/records/stages.js'; // projects move through pipelines (contract §19)
import { updateHandler } from '../../shared/http/crud.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = updateHandler(projectEntity);
