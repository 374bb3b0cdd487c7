/** The machine's process tree, read from /proc (no external tools): for tests that stop local mode. */
import { readdirSync, readFileSync } from 'node:fs';

/** ppid of every live (non-zombie) process, from /proc. */
export function processTable(): Map<number, number> {
  const table = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') table.set(Number(name), Number(ppid));
    } catch {
      // exited meanwhile
    }
  }
  return table;
}

/** The process and all its live descendants. */
export function descendants(root: number): number[] {
  const table = processTable();
  const tree = table.has(root) ? [root] : [];
  for (let i = 0; i < tree.length; i++) for (const [pid, ppid] of table) if (ppid === tree[i]) tree.push(pid);
  return tree;
}

/** A process's command line, or "" once it is gone. */
export const commandOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};
