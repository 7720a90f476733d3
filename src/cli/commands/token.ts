import type { Session } from '../open.js';

export const tokenCreate = ({ core, caller }: Session, name: string, options: { permissions: string; spaces: string; expiresInDays?: number }) =>
  core.auth.create(caller, {
    name,
    permissions: options.permissions,
    space_ids: options.spaces,
    ...(options.expiresInDays !== undefined ? { expires_in_days: options.expiresInDays } : {}),
  });

export const tokenList = ({ core, caller }: Session) => core.auth.list(caller);
export const tokenRevoke = ({ core, caller }: Session, token: string) => core.auth.revoke(caller, { token });

export const tokenUpdate = (
  { core, caller }: Session,
  token: string,
  options: { permissions?: string; spaces?: string; addSpaces?: string; removeSpaces?: string },
) =>
  core.auth.update(caller, {
    token,
    ...(options.permissions !== undefined ? { permissions: options.permissions } : {}),
    ...(options.spaces !== undefined ? { space_ids: options.spaces } : {}),
    ...(options.addSpaces !== undefined ? { add_space_ids: options.addSpaces } : {}),
    ...(options.removeSpaces !== undefined ? { remove_space_ids: options.removeSpaces } : {}),
  });

export const tokenDelete = ({ core, caller }: Session, token: string) => core.auth.delete(caller, { token });
