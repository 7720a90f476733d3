import { z } from 'zod';

/**
 * Output schemas. A result is either the tool's success shape or an error (`status` other than
 * ok/created/deleted, with `message`), and both travel as structuredContent, so every success field
 * is optional here: present whenever the status is a success.
 */
export function outputShape(success: z.ZodRawShape): z.ZodObject {
  const shape: Record<string, z.ZodType> = {
    status: z
      .enum(['ok', 'created', 'deleted', 'partial', 'error', 'not_found', 'already_exists', 'forbidden', 'conflict'])
      .describe('ok / created / deleted on success; otherwise the kind of error'),
    code: z.string().optional().describe('on error: the precise error code'),
    message: z.string().optional().describe('on error: what went wrong'),
    hint: z.string().optional().describe('on error: how to recover'),
  };
  for (const [key, schema] of Object.entries(success)) shape[key] = (schema as z.ZodType).optional();
  // Loose: error results carry the error's details (space_id, filename, limit…) beside status.
  return z.looseObject(shape);
}

export const spaceId = z.string().describe('Space identifier: letters, digits, "_" or "-", 1-64 characters, starting with a letter or digit');

export const note = z.looseObject({
  filename: z.string(),
  timestamp: z.string().describe('ISO 8601, UTC, second precision'),
  agent: z.string(),
  category: z.string(),
  tags: z.array(z.string()),
  content: z.string(),
});

export const notesResult = {
  space_id: z.string(),
  notes: z.array(note).describe('newest first'),
  total: z.number().int().describe('notes returned'),
  has_more: z.boolean().describe('more notes match than were returned'),
};

export const bankFile = z.looseObject({ filename: z.string(), content: z.string(), size: z.number().int() });

export const bankReadAllResult = {
  files: z.array(bankFile),
  total_size: z.number().int(),
  file_count: z.number().int(),
  truncated: z.boolean().describe('true when files were left out to stay under the size cap'),
  omitted_files: z.array(z.string()).optional(),
  max_bytes: z.number().int().optional(),
};

export const liveStats = z.looseObject({
  notes_count: z.number().int(),
  total_size: z.number().int(),
  oldest_note: z.string().nullable(),
  newest_note: z.string().nullable(),
});

export const spaceInfo = {
  space_id: z.string(),
  description: z.string(),
  owner: z.string(),
  created_at: z.string(),
  rules_size: z.number().int(),
  live: liveStats,
  bank: z.looseObject({ files_count: z.number().int(), total_size: z.number().int(), files: z.array(z.string()) }),
  last_consolidation: z.string().nullable(),
  consolidation_count: z.number().int(),
  total_notes_processed: z.number().int(),
  synthesis_exists: z.boolean(),
};
