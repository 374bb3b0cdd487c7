/**
 * A fair share of the worker's parallel work: at most `capacity` items are worked on at once in
 * this process, and a freed slot goes to the groups (accounts) that wait in turn (round-robin),
 * not to the group that asked first. A group alone may use every slot; while another group holds
 * or waits for one, a group gets no new slot beyond `perGroup`. So a bulk-writing account drains
 * at full speed when nobody else needs the worker, and a quiet account's change gets the next
 * freed slot, after which the busy account shrinks to its share: the quiet account's table calls
 * then wait behind at most `perGroup` of the busy account's items, not behind all of them
 * (locally every call goes to one DynamoDB Local, which serves them in arrival order:
 * docs/performance.md, "Fairness").
 */
export class FairSlots {
  private busy = 0;
  private held = new Map<string, number>();
  /** Waiting acquirers by group, groups in the order they will be served. */
  private waiting = new Map<string, Array<() => void>>();

  constructor(
    readonly capacity: number,
    readonly perGroup: number = capacity,
  ) {}

  /** Resolves once a slot is the caller's; call the returned function to give it back. */
  acquire(group: string): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        this.busy++;
        this.held.set(group, (this.held.get(group) ?? 0) + 1);
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.busy--;
          const left = (this.held.get(group) ?? 1) - 1;
          if (left > 0) this.held.set(group, left);
          else this.held.delete(group);
          this.next();
        });
      };
      const list = this.waiting.get(group) ?? [];
      list.push(grant);
      this.waiting.set(group, list);
      this.next();
    });
  }

  /** Slots in use, per group, and groups waiting (for tests). */
  get state(): { busy: number; held: Record<string, number>; waitingGroups: string[] } {
    return { busy: this.busy, held: Object.fromEntries(this.held), waitingGroups: [...this.waiting.keys()] };
  }

  /** Whether another group holds or waits for a slot. */
  private othersActive(group: string): boolean {
    for (const g of this.waiting.keys()) if (g !== group) return true;
    for (const g of this.held.keys()) if (g !== group) return true;
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
  }
}
