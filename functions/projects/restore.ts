import '../../shared/domain/records/stage-trash.js'; // a project's deletion and restore end and begin its stage visits (contract §19)
import { restoreHandler } from '../../shared/http/trash.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = restoreHandler(projectEntity);
