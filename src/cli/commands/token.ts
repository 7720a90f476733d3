import { type CommandDef, integer } from '../command.js';
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

export const tokenCommands: CommandDef = {
  name: 'token',
  description: 'access tokens (admin): who may read, write or administer which spaces',
  commands: [
    {
      name: 'create <name>',
      description: 'create a token (shown once); its name is the agent name on the notes written with it',
      options: [
        { flags: '-p, --permissions <list>', description: 'read, write and/or admin, comma-separated', required: true },
        { flags: '-s, --spaces <list>', description: "'*' for every space, or space ids, comma-separated", required: true },
        { flags: '--expires-in-days <n>', description: 'expire after n days (default: never)', parse: integer },
      ],
      run: tokenCreate,
      examples: ['live-mem token create ci-bot -p read,write -s my-project --expires-in-days 90'],
    },
    {
      name: 'list',
      description: 'the tokens you manage (all, or those within your spaces), never the token itself',
      run: tokenList,
      view: 'tokens',
    },
    { name: 'revoke <name_or_hash>', description: 'refuse a token from now on', run: tokenRevoke },
    {
      name: 'update <name_or_hash>',
      description: "change a token's permissions or spaces",
      options: [
        { flags: '-p, --permissions <list>', description: 'new permissions' },
        { flags: '-s, --spaces <list>', description: "replacement spaces ('*' = every space)" },
        { flags: '--add-spaces <list>', description: 'spaces to add' },
        { flags: '--remove-spaces <list>', description: 'spaces to remove' },
      ],
      run: tokenUpdate,
    },
    { name: 'delete <name_or_hash>', description: 'remove a token for good', run: tokenDelete },
  ],
};
