import type { Opened } from '../open.js';
import { VERSION } from '../version.js';

/** Serves MCP on stdio. The MCP SDK is imported here, lazily, so shell commands never pay for it. */
export async function serve(opened: Opened): Promise<Record<string, never>> {
  const { serveStdio } = await import('../../mcp/stdio.js');
  const { storage } = opened.core.context;
  opened.logger.info(`serving MCP on stdio (store: ${storage.name} ${storage.location}, agent: ${opened.caller.agent})`);
  const { contextWindow, maxTokens } = opened.settings.llm;
  await serveStdio({
    core: opened.core,
    version: VERSION,
    logger: opened.logger,
    resolveCaller: () => opened.caller,
    samplingLimits: { contextWindow, maxOutputTokens: maxTokens },
  });
  return {};
}
