/**
 * A fair share of the worker's parallel work: at most `capacity` items are worked on at once in
 * this process, and a freed slot goes to the groups (accounts) that wait in turn (round-robin),
 * not to the group that asked first. A group alone may use every slot; while another group holds
 * or waits for one, or did within the last `recentMs`, a group gets no new slot beyond
 * `perGroup`. So a bulk-writing account drains at full speed when nobody else needs the worker,
 * and while a quiet account keeps writing now and then the busy one stays at its share: the quiet
 * account's changes find a free slot at once, and their table calls wait behind at most
 * `perGroup` of the busy account's items, not behind all of them
 * (locally every call goes to one DynamoDB Local, which serves them in arrival order:
 * docs/performance.md, "Fairness").
 *
 * No wait is unbounded: when a group is held back only by another group's recent activity, the
 * slots look again once that has lapsed (a timer: no acquire or release need come meanwhile, and
 * none may, when the holders wait on the waiters), and `acquire` takes a time limit after which
 * it gives up with `SlotTimeout`.
 */
export class SlotTimeout extends Error {
  constructor(group: string, ms: number, state: unknown) {
    super(`no free slot for ${group || '(no group)'} within ${ms} ms (${JSON.stringify(state)})`);
    this.name = 'SlotTimeout';
  }
}

export class FairSlots {
  private busy = 0;
  private held = new Map<string, number>();
  /** When each group last asked for or gave back a slot (dropped once older than `recentMs`). */
  private seen = new Map<string, number>();
  /** Waiting acquirers by group, groups in the order they will be served. */
  private waiting = new Map<string, Array<() => void>>();
  /** The look again once a group's recent activity lapses (see `recheckLater`). */
  private recheck: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly capacity: number,
    readonly perGroup: number = capacity,
    readonly recentMs = 0,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Resolves once a slot is the caller's; call the returned function to give it back. Rejects
   * with `SlotTimeout` when none was given within `timeoutMs`.
   */
  acquire(group: string, timeoutMs = Infinity): Promise<() => void> {
    this.seen.set(group, this.now());
    return new Promise((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grant = () => {
        clearTimeout(timer);
        this.busy++;
        this.held.set(group, (this.held.get(group) ?? 0) + 1);
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.busy--;
          this.seen.set(group, this.now());
          const left = (this.held.get(group) ?? 1) - 1;
          if (left > 0) this.held.set(group, left);
          else this.held.delete(group);
          this.next();
        });
      };
      const list = this.waiting.get(group) ?? [];
      list.push(grant);
      this.waiting.set(group, list);
      if (Number.isFinite(timeoutMs)) {
        timer = setTimeout(() => {
          const waiting = this.waiting.get(group);
          const at = waiting?.indexOf(grant) ?? -1;
          if (at < 0) return;
          waiting!.splice(at, 1);
          if (!waiting!.length) this.waiting.delete(group);
          reject(new SlotTimeout(group, timeoutMs, this.state));
        }, timeoutMs);
        timer.unref?.();
      }
      this.next();
    });
  }

  /** Slots in use, per group, and groups waiting (for tests). */
  get state(): { busy: number; held: Record<string, number>; waitingGroups: string[] } {
    return { busy: this.busy, held: Object.fromEntries(this.held), waitingGroups: [...this.waiting.keys()] };
  }

  /** Whether another group holds or waits for a slot, or did within the last `recentMs`. */
  private othersActive(group: string): boolean {
    for (const g of this.waiting.keys()) if (g !== group) return true;
    for (const g of this.held.keys()) if (g !== group) return true;
    const since = this.now() - this.recentMs;
    for (const [g, at] of this.seen) {
      if (at <= since) this.seen.delete(g);
      else if (g !== group) return true;
    }
    return false;
  }

  private next() {
    for (let progressed = true; progressed && this.busy < this.capacity; ) {
      progressed = false;
      // The first group in turn order that is under its share gets the slot and goes to the back.
      for (const [group, list] of this.waiting) {
        if ((this.held.get(group) ?? 0) >= this.perGroup && this.othersActive(group)) continue;
        this.waiting.delete(group);
        const grant = list.shift()!;
        if (list.length) this.waiting.set(group, list);
        grant();
        progressed = true;
        break;
      }
    }
    this.recheckLater();
  }

  /**
   * When groups wait while slots are free, they are held back by another group's activity within
   * the last `recentMs`: look again when the earliest of those moments lapses.
   */
  private recheckLater() {
    clearTimeout(this.recheck);
    this.recheck = undefined;
    if (this.busy >= this.capacity || this.waiting.size === 0) return;
    const since = this.now() - this.recentMs;
    let earliest = Infinity;
    for (const [g, at] of this.seen) {
      if (at <= since) this.seen.delete(g);
      else earliest = Math.min(earliest, at);
    }
    if (earliest === Infinity) return;
    this.recheck = setTimeout(() => this.next(), Math.max(1, earliest - since + 1));
    this.recheck.unref?.();
  }
}
