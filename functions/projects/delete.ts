import '../../shared/domain/records/stage-trash.js'; // a project's deletion and restore end and begin its stage visits (contract §19)
import { deleteHandler } from '../../shared/http/crud.js';
import { projectEntity } from '../../shared/schemas/entities/index.js';

export const handler = deleteHandler(projectEntity);
