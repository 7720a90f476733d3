/**
 * The plan's JSON schema (draft 2020-12), as plan.ts reads it: what a work package gives an agent or a
 * person who writes the plan (agent-plan.ts). parsePlan stays the judge; this describes it.
 */
const refs = { type: 'array', items: { type: ['integer', 'string'] }, description: 'the notes (by number i of "note i/n") it comes from' } as const;

export const PLAN_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['synthesis'],
  properties: {
    files: {
      type: 'array',
      description: 'only the files you change',
      items: {
        type: 'object',
        required: ['filename', 'action'],
        properties: {
          filename: { type: 'string', pattern: '^[^/\\\\]+\\.md$' },
          action: { enum: ['create', 'rewrite', 'edit'] },
          content: { type: 'string', description: 'create, rewrite: the whole file, starting with a level-1 heading' },
          sources: refs,
          edits: {
            type: 'array',
            description: 'edit: section edits',
            items: {
              type: 'object',
              required: ['op', 'section'],
              properties: {
                op: { enum: ['append', 'prepend', 'replace', 'add', 'delete'] },
                section: { type: 'string', description: 'heading path, outermost first, joined by " > "' },
                title: { type: 'string', description: 'add: the new sub-section heading' },
                content: { type: 'string' },
                sources: refs,
              },
            },
          },
        },
      },
    },
    notes: {
      type: 'array',
      description: 'every note no change cites',
      items: {
        type: 'object',
        required: ['note', 'status'],
        properties: {
          note: { type: ['integer', 'string'] },
          status: { enum: ['superseded', 'discarded'] },
          by: { type: ['integer', 'string'] },
          reason: { type: 'string' },
        },
      },
    },
    synthesis: { type: 'string', description: 'cumulative: the previous synthesis merged with what these notes add' },
    confirm: { type: 'string', description: 'only to commit a plan sent back for its accounting or retention as it is: the token the answer gave' },
  },
} as const;
