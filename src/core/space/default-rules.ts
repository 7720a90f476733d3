/**
 * The rules a space gets when it is created without any: the six standard memory-bank files, and
 * which note categories feed each. Consolidation (and the model behind it) reads these verbatim.
 */
export const DEFAULT_RULES = `# Memory Bank Rules

The memory bank is six Markdown files. Consolidation keeps them up to date from the live notes;
agents read them and never write them.

## Files

### projectbrief.md
The foundation: what the project is, its goals, scope and constraints. Changes rarely.
Fed by: \`decision\` notes that change goals or scope.

### productContext.md
Why the project exists, the problems it solves, who uses it and how it should behave.
Fed by: \`insight\` notes about users and purpose, \`decision\` notes about behaviour.

### activeContext.md
What is happening now: current focus, recent changes, next steps, open questions.
Rewritten at every consolidation to reflect the present.
Fed by: \`observation\`, \`todo\`, \`question\` and recent \`decision\` notes.

### systemPatterns.md
Architecture, key technical decisions, design patterns and how components relate.
Fed by: \`decision\` and \`insight\` notes about design.

### techContext.md
Technologies, set-up, dependencies, constraints of the environment, tooling.
Fed by: \`observation\` and \`decision\` notes about tools and environment.

### progress.md
What works, what is left, known issues, and the history of the project.
Append-only: existing entries are kept; new ones are added.
Fed by: \`progress\` and \`issue\` notes, and \`todo\` notes once done.

## Conventions
- Plain Markdown, no front-matter. Each file starts with a level-1 heading.
- Keep facts; drop what newer notes make obsolete (except in progress.md).
- Each file stays within its size budget: compaction rewrites its oldest sections as digests
  (the text they replace stays in history).
- Attribute decisions to the agent that made them when it matters.
- Code listed as moved on: correct the statements citing it, or mark them "(stale)".
`;
