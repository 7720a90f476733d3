import type { CommandDef } from '../command.js';
import type { Session } from '../open.js';

export const doctor = ({ core, caller, progress }: Session, spaceId: string | undefined, options: { fix?: boolean }) =>
  core.doctor(
    caller,
    { ...(spaceId !== undefined ? { space_id: spaceId } : {}), fix: options.fix === true },
    { onProgress: (event) => progress.update(`doctor · ${event.message}`) },
  );

export const doctorCommand: CommandDef = {
  name: 'doctor [space_id]',
  description: 'check the store (reachable, conditional writes, leftovers, pending commits, index, endpoints) and say what to do',
  options: [{ flags: '--fix', description: 'repair what is safe to repair (admin)' }],
  run: doctor,
  view: 'doctor',
};
