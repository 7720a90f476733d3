import { LiveMemError } from '../shared/errors.js';

/**
 * Who is calling. Every core operation takes a Caller and checks it through `authorize`, the one
 * guard. The shells only decide how a Caller is built: today the local owner; tokens later.
 */
export type Permission = 'read' | 'write' | 'admin';

export interface Caller {
  /** The filename-safe agent name written on notes. */
  agent: string;
  permissions: ReadonlySet<Permission>;
  /** The spaces this caller may touch; '*' for all. */
  spaces: '*' | ReadonlySet<string>;
  /** The local owner may sign notes with another agent name (several local agents share one user); token callers may not. */
  canChooseAgent: boolean;
  /** The local owner (no token, auth not required): the files are theirs, so a first note may make its space. */
  localOwner?: boolean;
}

export function ownerCaller(agent: string): Caller {
  return { agent: toAgentName(agent), permissions: new Set(['read', 'write', 'admin']), spaces: '*', canChooseAgent: true, localOwner: true };
}

/**
 * Throws `forbidden` unless the caller holds `permission` (admin implies write implies read) and,
 * when a space is named, may touch it. Runs before any existence check, so a caller without access
 * learns nothing about a space.
 */
export function authorize(caller: Caller, permission: Permission, spaceId?: string): void {
  if (!holds(caller, permission)) {
    throw new LiveMemError('forbidden', `this caller lacks the '${permission}' permission`);
  }
  if (spaceId !== undefined && !canAccessSpace(caller, spaceId)) {
    throw new LiveMemError('forbidden', `this caller has no access to space '${spaceId}'`);
  }
}

const IMPLIED: Readonly<Record<Permission, readonly Permission[]>> = { read: ['read', 'write', 'admin'], write: ['write', 'admin'], admin: ['admin'] };

/** Whether the caller holds `permission`: admin implies write implies read. */
export function holds(caller: Caller, permission: Permission): boolean {
  return IMPLIED[permission].some((p) => caller.permissions.has(p));
}

export function canAccessSpace(caller: Caller, spaceId: string): boolean {
  return caller.spaces === '*' || caller.spaces.has(spaceId);
}

/** Reduces any name to the filename-safe form used in note names: [A-Za-z0-9.-], at most 64 characters. */
export function toAgentName(raw: string): string {
  const safe = raw
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^A-Za-z0-9.-]+/g, '-')
    .replace(/^[.-]+|[.-]+$/g, '')
    .slice(0, 64)
    .replace(/[.-]+$/g, '');
  return safe || 'agent';
}
