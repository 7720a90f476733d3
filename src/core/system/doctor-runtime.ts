import { NODE_LINES, runtimeState } from '../../shared/runtime.js';
import type { CoreContext } from '../context.js';
import type { Finding } from './doctor-space.js';

/**
 * The Node.js this process runs on. Said here, once, rather than at every start: a line on an MCP
 * client's stderr at each launch is one nobody can act on there (the AWS SDK's own notice is
 * silenced by the S3 driver for that reason).
 */
export function checkRuntime(context: CoreContext, version: string): Finding {
  const state = runtimeState(version, context.clock().toISOString().slice(0, 10));
  const lines = NODE_LINES.map((line) => line.major);
  const newer = lines.filter((major) => major > Number(version.split('.')[0])).join(' or ');
  if (!state.supported)
    return {
      check: 'runtime',
      status: 'warn',
      fixable: false,
      message: `Node.js ${version} is not a version live-mem is tested on (${lines.join(', ')})`,
      hint: `use Node.js ${lines.at(-1)} (or ${lines.slice(0, -1).join(', ')})`,
    };
  if (state.pastEndOfLife)
    return {
      check: 'runtime',
      status: 'warn',
      fixable: false,
      message: `Node.js ${version}: its line reached end of life on ${state.pastEndOfLife} (no more security fixes); live-mem supports it while its dependencies do`,
      hint: `move to Node.js ${newer || lines.at(-1)}`,
    };
  return { check: 'runtime', status: 'ok', fixable: false, message: `Node.js ${version}` };
}
