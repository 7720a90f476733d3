import type { Session } from '../open.js';

export const doctor = ({ core, caller, progress }: Session, spaceId: string | undefined, options: { fix?: boolean }) =>
  core.doctor(
    caller,
    { ...(spaceId !== undefined ? { space_id: spaceId } : {}), fix: options.fix === true },
    { onProgress: (event) => progress.update(`doctor · ${event.message}`) },
  );
