/**
 * A fair share of the worker's parallel work: at most `capacity` items are worked on at once in
 * this process, whichever accounts they belong to, and a freed slot goes to the groups that wait
 * in turn (round-robin), not to the group that asked first. A bulk-writing account that keeps
 * every slot busy gets the next slot only after every other waiting account got one, so a quiet
 * account's change waits for at most one item of the busy one, not for its backlog. (SQS FIFO
 * already keeps an account's messages to one batch at a time; this shares what the batches run
 * on: the table, locally one DynamoDB Local.)
 */
export class FairSlots {
  private busy = 0;
  /** Waiting acquirers by group, groups in the order they will be served. */
  private waiting = new Map<string, Array<() => void>>();

  constructor(readonly capacity: number) {}

  /** Resolves once a slot is the caller's; call the returned function to give it back. */
  acquire(group: string): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        this.busy++;
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.busy--;
          this.next();
        });
      };
      if (this.busy < this.capacity && this.waiting.size === 0) return grant();
      const list = this.waiting.get(group) ?? [];
      list.push(grant);
      this.waiting.set(group, list);
    });
  }

  /** Slots in use and groups waiting (for tests). */
  get state(): { busy: number; waitingGroups: string[] } {
    return { busy: this.busy, waitingGroups: [...this.waiting.keys()] };
  }

  private next() {
    while (this.busy < this.capacity && this.waiting.size) {
      // The group at the head of the turn order gets the slot and goes to the back.
      const [group, list] = this.waiting.entries().next().value as [string, Array<() => void>];
      this.waiting.delete(group);
      const grant = list.shift()!;
      if (list.length) this.waiting.set(group, list);
      grant();
    }
  }
}
