/** A project's stage history (contract §19, projects-stage-history): its visits, oldest first. */
import { stageVisitsAfter } from '../db/pipelines.js';
import { recordReads } from '../db/record-store.js';
import { notFound } from '../errors.js';
import type { OperationContext } from './context.js';
import { cursorScope, DEFAULT_LIMIT, type Page } from './listing.js';

const projects = recordReads('project');

export async function stageHistory(ctx: OperationContext, input: { project_id: string; cursor?: string; limit?: number }): Promise<Page<Record<string, unknown>>> {
  const limit = input.limit ?? DEFAULT_LIMIT;
  const [scope, project] = await Promise.all([cursorScope(ctx, 'projects', input.cursor, { project_id: input.project_id }), projects.get(ctx.accountId, input.project_id)]);
  if (!project) throw notFound('projects', 'project');
  const found = await stageVisitsAfter(ctx.accountId, input.project_id, Number(scope.after ?? 0), limit + 1);
  const items = found.slice(0, limit);
  const next = found.length > limit ? String(items[items.length - 1]!.seq) : undefined;
  return { items: items.map(({ seq: _seq, ...visit }) => visit), next_cursor: scope.next(next) };
}
