/** Schemas several families' operations share. */
import * as v from 'valibot';

/** The result of a delete. */
export const deletedSchema = v.object({ deleted: v.pipe(v.literal(true), v.metadata({ description: 'Always true on success' })) });
