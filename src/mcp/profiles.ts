import { type Caller, holds } from '../core/caller.js';
import { LiveMemError } from '../shared/errors.js';
import type { ToolDefinition } from './tool.js';
import { allTools } from './tools/index.js';

/**
 * Tool profiles: which tools the server offers (LIVE_MEM_TOOLS, --tools, `tools:`). Every tool
 * listed costs every agent tokens on every conversation, so an agent that only takes and reads
 * notes can be offered just that. `all` is the default, so that agents and configurations written
 * for the original server keep working; `admin` adds the tools for people only (corrections, forget).
 */
const AGENT = [
  'space_list',
  'space_summary',
  'live_note',
  'live_read',
  'live_search',
  'memory_search',
  'memory_context',
  'bank_read',
  'bank_read_all',
  'bank_consolidate',
  'bank_consolidation_status',
  'system_whoami',
];

const STANDARD = [
  ...AGENT,
  'space_create',
  'space_info',
  'space_rules',
  'space_update',
  'space_delete',
  'backup_create',
  'backup_list',
  'backup_restore',
  'backup_download',
  'backup_delete',
  'space_export',
  'bank_list',
  'system_health',
  'system_about',
];

/**
 * What people do, not agents: corrections (core/revision) write the bank past consolidation's guards,
 * and a forget (core/forget) destroys notes every agent relies on. Provenance read whole (bank_explain)
 * is a person's question too, and an agent already gets a bank section's sources on each memory_search
 * hit (`all` is at its 8,000-token budget). No model is offered them unless asked for (`admin`, or by
 * name); people use the CLI and the viewer.
 */
export const PEOPLE_ONLY = ['bank_write', 'bank_delete', 'bank_revert', 'space_update_rules', 'memory_forget', 'bank_explain'];

/** Profile → tool names; `admin` is every tool, `all` every tool but those for people only. */
export const TOOL_PROFILES: Readonly<Record<string, readonly string[] | 'all'>> = {
  agent: AGENT,
  standard: STANDARD,
  all: allTools.map((tool) => tool.name).filter((name) => !PEOPLE_ONLY.includes(name)),
  admin: 'all',
};

export const PROFILE_NAMES = Object.keys(TOOL_PROFILES);

const profileNamed = (name: string) => (Object.hasOwn(TOOL_PROFILES, name) ? TOOL_PROFILES[name] : undefined);

/** The tools a server offers, and how its tools_profile reports them. */
export interface ToolSelection {
  /** agent, standard, all, or `custom` for a list of names. */
  profile: string;
  tools: ToolDefinition[];
}

/** Where a tools setting comes from, as an error about it names it. */
const SETTING = 'the tools setting (LIVE_MEM_TOOLS, --tools or tools:)';

/**
 * Resolves a tools setting: a profile name, or a comma-separated list of tool names (profile names
 * may appear in it, e.g. `agent,backup_create`). The tools keep the order of `available`. An unknown
 * name is a config_error naming it, the valid profiles and where the setting came from (`source`).
 */
export function selectTools(spec = 'all', available: readonly ToolDefinition[] = allTools, source = SETTING): ToolSelection {
  const items = spec
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
  if (items.length === 0) throw new LiveMemError('config_error', `${source} is empty: name a profile (${PROFILE_NAMES.join(', ')}) or tools`);
  const known = new Set(available.map((tool) => tool.name));
  const wanted = new Set<string>();
  const unknown: string[] = [];
  for (const item of items) {
    const profile = profileNamed(item);
    if (profile === 'all') for (const name of known) wanted.add(name);
    else if (profile) for (const name of profile) wanted.add(name);
    else if (known.has(item)) wanted.add(item);
    else unknown.push(item);
  }
  if (unknown.length > 0) {
    throw new LiveMemError(
      'config_error',
      `unknown tool${unknown.length > 1 ? 's' : ''} in ${source}: ${unknown.join(', ')}; ` +
        `use a profile (${PROFILE_NAMES.join(', ')}) or tool names such as live_note, comma-separated`,
      { unknown, profiles: PROFILE_NAMES },
    );
  }
  const profile = items.length === 1 && items[0] !== undefined && profileNamed(items[0]) ? items[0] : 'custom';
  return { profile, tools: available.filter((tool) => wanted.has(tool.name)) };
}

/**
 * The tools of `tools` a caller may call: those whose permission it holds (the public ones for
 * anyone). What a token cannot call costs its agent tokens on every conversation and invites calls
 * that can only be refused, so it is not listed; a call to it is still refused by the core's guard,
 * the one that decides.
 */
export function callableBy(caller: Caller, tools: readonly ToolDefinition[]): ToolDefinition[] {
  return tools.filter((tool) => tool.permission === 'public' || holds(caller, tool.permission));
}
