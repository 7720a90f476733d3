import type { Opened } from '../open.js';

export const bankList = ({ core, caller }: Opened, spaceId: string) => core.bank.list(caller, { space_id: spaceId });
export const bankRead = ({ core, caller }: Opened, spaceId: string, filename: string) => core.bank.read(caller, { space_id: spaceId, filename });
export const bankReadAll = ({ core, caller }: Opened, spaceId: string) => core.bank.readAllFor(caller, { space_id: spaceId });
