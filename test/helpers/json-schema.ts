import { Ajv } from 'ajv';
import formats from 'ajv-formats';

/**
 * A JSON Schema (draft-07) validator for a schema some publisher wrote: its errors as readable lines,
 * none when the data passes. `example`, an annotation the MCP Registry's schema uses and draft-07 does
 * not define, is accepted as one; any other unknown keyword stops the compile (a typo in a schema
 * written here must not pass silently). Formats (`uri`…) are checked.
 */
export function schemaValidator(schema: object): (data: unknown) => string[] {
  const ajv = new Ajv({ allErrors: true });
  ajv.addKeyword('example');
  formats.default(ajv);
  const validate = ajv.compile(schema);
  return (data) =>
    validate(data) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}
