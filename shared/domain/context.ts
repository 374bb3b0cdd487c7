import type { Actor } from '../schemas/events.js';

/** Who is calling: what the authorizer passes to every handler (API Gateway simple-response context). */
export interface AuthContext {
  accountId: string;
  userId: string;
  /** The API key of the call (contract §14): the `actor` id of the changes it makes (§12). */
  keyId?: string;
  /** The member the key acts for (contract §20): `userId` is then the member's id, and the actor adds `member_id`. */
  memberId?: string;
  /**
   * The key's scopes (contract §14). Absent: a token issued before scopes existed, which holds
   * `*` and `api_keys:manage` (shared/auth/scopes.ts `scopesFromContext`).
   */
  scopes?: readonly string[];
}

/** What every domain call receives: the caller, the operation's name and the request headers. */
export interface OperationContext extends AuthContext {
  operation: string;
  headers: Record<string, string | undefined>;
  /** The request's id (API Gateway's, or the local server's): in every error body and log line. */
  requestId?: string;
  /** Who the writes of this call are attributed to (§12); default: the calling key. Imports and inbound mail set their own. */
  actor?: Actor;
}

/** The actor of a call's writes: the context's own, else the API key (a token's user id until keys exist) with the member it acts for. */
export const actorOf = (ctx: OperationContext): Actor => ctx.actor ?? { type: 'api_key', id: ctx.keyId ?? ctx.userId, ...(ctx.memberId ? { member_id: ctx.memberId } : {}) };
