import type { CommandDef } from '../command.js';
import { hereCheckout } from '../here.js';
import type { Session } from '../open.js';

export const doctor = async ({ core, caller, progress }: Session, spaceId: string | undefined, options: { fix?: boolean }) => {
  // In a project, each space's statements whose cited code moved on in this checkout are listed.
  const checkout = await hereCheckout();
  return core.doctor(
    caller,
    { ...(spaceId !== undefined ? { space_id: spaceId } : {}), fix: options.fix === true },
    { onProgress: (event) => progress.update(`doctor · ${event.message}`), ...(checkout ? { checkout } : {}) },
  );
};

export const doctorCommand: CommandDef = {
  name: 'doctor [space_id]',
  description: 'check the store (reachable, conditional writes, leftovers, pending commits, index, endpoints, code the memory cites) and say what to do',
  options: [{ flags: '--fix', description: 'repair what is safe to repair (admin)' }],
  run: doctor,
  view: 'doctor',
};
