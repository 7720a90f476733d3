import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * Whether a process that left something behind (a lease, a temp file) is still running: the one
 * place that answers it. A process is named by the machine it runs on — the boot id and the pid
 * namespace, which pin a pid to one running kernel and one pid space (two containers on a host share
 * the first, not the second) — and its pid. Unknown off Linux: there, what a process left waits out
 * its expiry (a lease) or its age (a temp file).
 */
const MACHINE = ((): string | undefined => {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    const namespace = /\[(\d+)\]/.exec(readlinkSync('/proc/self/ns/pid'))?.[1];
    return boot && namespace ? `${boot}/${namespace}` : undefined;
  } catch {
    return undefined;
  }
})();

/** This process, as a lease records it: `{boot id}/{pid namespace}/{pid}`; undefined off Linux. */
export const PROCESS_ID = MACHINE ? `${MACHINE}/${process.pid}` : undefined;

/** The machine in eight hex characters, for names that must stay short (the fs driver's temp files); undefined off Linux. */
export const MACHINE_TAG = MACHINE ? createHash('sha256').update(MACHINE).digest('hex').slice(0, 8) : undefined;

/**
 * Whether `pid`, on the machine `machine` names (a PROCESS_ID's first part, or a MACHINE_TAG), has
 * exited. False whenever it cannot be told — another machine, another pid space, off Linux, this
 * very process, a pid reused by another process since: then what it left is kept, the safe side.
 */
export function processGone(machine: string, pid: number): boolean {
  if (!MACHINE || (machine !== MACHINE && machine !== MACHINE_TAG)) return false;
  if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return false; // alive (or its pid reused)
  } catch (error) {
    return (error as { code?: string }).code === 'ESRCH';
  }
}
