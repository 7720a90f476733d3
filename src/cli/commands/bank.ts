import type { Session } from '../open.js';

export const bankList = ({ core, caller }: Session, spaceId: string) => core.bank.list(caller, { space_id: spaceId });
export const bankRead = ({ core, caller }: Session, spaceId: string, filename: string) => core.bank.read(caller, { space_id: spaceId, filename });
export const bankReadAll = ({ core, caller }: Session, spaceId: string) => core.bank.readAllFor(caller, { space_id: spaceId });
