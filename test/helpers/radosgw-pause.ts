/**
 * Pausing the test radosgw (SIGSTOP), to see what live-mem does with a store that accepts
 * connections and then answers nothing. Other test files share this radosgw: a pause is capped at a
 * few seconds, and the process is always continued (SIGCONT) — when the work ends, when the cap is
 * reached, and when this process exits.
 */
import { readdir, readFile, readlink } from 'node:fs/promises';

/** Longest pause, whatever the work inside still waits for. */
export const MAX_PAUSE_MS = 5_000;

/**
 * The pid of the radosgw listening on the endpoint's port, found in /proc (the process owning that
 * listening socket), so it is the one the tests talk to even if several run.
 */
export async function radosgwPid(endpoint: string): Promise<number> {
  const port = Number(new URL(endpoint).port || 80);
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1]?.split(':').pop();
      if (local !== undefined && Number.parseInt(local, 16) === port && fields[3] === '0A' && fields[9]) inodes.add(fields[9]);
    }
  }
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = (await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '')).trim();
    if (comm !== 'radosgw') continue;
    const fds = await readdir(`/proc/${entry}/fd`).catch(() => [] as string[]);
    for (const fd of fds) {
      const target = await readlink(`/proc/${entry}/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode !== undefined && inodes.has(inode)) return Number(entry);
    }
  }
  throw new Error(`no radosgw process listens on port ${port} of this machine (${endpoint}): start it with scripts/ceph-up.sh`);
}

/**
 * Runs `work` while radosgw is stopped, and continues it as soon as `work` settles or MAX_PAUSE_MS
 * have passed, whichever comes first. Returns what `work` returned, and whether the cap was hit.
 */
export async function whilePaused<T>(pid: number, work: () => Promise<T>): Promise<{ result: PromiseSettledResult<T>; capped: boolean }> {
  let continued = false;
  const resume = () => {
    if (continued) return;
    continued = true;
    process.kill(pid, 'SIGCONT');
  };
  process.once('exit', resume);
  let capped = false;
  const cap = setTimeout(() => {
    capped = true;
    resume();
  }, MAX_PAUSE_MS);
  try {
    process.kill(pid, 'SIGSTOP');
    // A signal is delivered, not obeyed at once: on a loaded machine radosgw's threads may still answer
    // for a moment. The work starts once the kernel says the process is stopped.
    await stopped(pid);
    const [result] = await Promise.allSettled([work()]);
    return { result: result as PromiseSettledResult<T>, capped };
  } finally {
    clearTimeout(cap);
    resume();
    process.removeListener('exit', resume);
  }
}

/** Waits until /proc says `pid` is stopped (state T), at most a second (then the work runs anyway, and its own checks tell). */
async function stopped(pid: number): Promise<void> {
  for (let waited = 0; waited < 1_000; waited += 5) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    // The state is the field after the command's name, which is in parentheses and may hold spaces.
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T') return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
