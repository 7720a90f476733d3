import { STEPS, type StepName, type Wording } from '../../src/shared/hints.js';

/**
 * A text with a shell's own words replaced by what they stand for, to compare the advice two shells
 * give: a step by the tool it is (the CLI may name a closer command: `doctor` for system_health),
 * `call again` / `run again` by <again>, the confirmation by <confirm>.
 */
export function normalised(text: string, wording: Wording, space = 'ghost'): string {
  let out = text;
  // Each wording once (two steps may be one tool), the longest first: `space_create (space_id "ghost")` before `space_create`.
  const steps = new Map((Object.keys(STEPS) as StepName[]).map((name) => [wording.step(name, space), `<${STEPS[name].tool}>`] as const));
  for (const [said, meant] of [...steps].filter(([said]) => said).sort((a, b) => b[0].length - a[0].length)) out = out.replaceAll(said, meant);
  for (const [said, meant] of [
    [wording.confirm, '<confirm>'],
    [wording.again, '<again>'],
    [wording.onlyIf, '<only-if>'],
  ] as const)
    out = out.replaceAll(said, meant);
  return out;
}
