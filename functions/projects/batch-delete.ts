import '../../shared/domain/records/stage-trash.js'; // a project's deletion and restore end and begin its stage visits (contract §19)
import { batchDeleteHandler } from '../../shared/http/batch.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = batchDeleteHandler(projectEntity);
