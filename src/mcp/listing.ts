import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { ToolDefinition } from './tool.js';

type JsonSchema = Record<string, unknown>;

/**
 * The tools/list answer for these tools. Every agent pays for it, in tokens, on every
 * conversation, so it leaves out what the SDK's own rendering adds and says nothing:
 * - `$schema` on each schema: without it MCP's default dialect (JSON Schema 2020-12) applies, and
 *   the keywords used here mean the same in draft-07, which validators default to;
 * - the ±2^53 bounds zod writes on every integer;
 * - `additionalProperties: {}` on every open object (each output): absent, it means the same;
 * - a `default` that is its type's zero value (`""`, `[]`, `false`, `0`): an optional argument left
 *   out is taken as that, by models and by convention;
 * - `execution: { taskSupport: 'forbidden' }`, which is what an absent `execution` means.
 * Arguments are checked against the same zod schemas on each call (parseArguments; results: see server.ts).
 */
export function listTools(tools: readonly ToolDefinition[]): Tool[] {
  return tools.map((tool) => ({
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchema(z.object(tool.input), 'input') as Tool['inputSchema'],
    outputSchema: jsonSchema(tool.output, 'output') as NonNullable<Tool['outputSchema']>,
    annotations: tool.annotations,
  }));
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    override: ({ jsonSchema }) => {
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      if (isZero(jsonSchema.default)) delete jsonSchema.default;
      const extra = jsonSchema.additionalProperties;
      if (typeof extra === 'object' && extra !== null && Object.keys(extra).length === 0) delete jsonSchema.additionalProperties;
    },
  });
  return rest;
}

const isZero = (value: unknown): boolean => value === '' || value === false || value === 0 || (Array.isArray(value) && value.length === 0);
