/**
 * server.json, the listing live-mem publishes to the MCP Registry once the package is on npm: valid
 * against the registry's published schema (vendored in fixtures/schemas/, with its source), and saying
 * what package.json says — the registry checks package.json's `mcpName` against the listing's name, and
 * a listing must name the version it lists. Every variable it offers is a setting live-mem reads.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { FIELDS } from '../src/config/fields.js';
import { schemaValidator } from './helpers/json-schema.js';

const json = async (file: string) => JSON.parse(await readFile(new URL(`../${file}`, import.meta.url), 'utf8'));

interface Listing {
  $schema: string;
  name: string;
  version: string;
  packages: Array<{ registryType: string; identifier: string; version: string; environmentVariables: Array<{ name: string; isSecret?: boolean }> }>;
}

describe('server.json, for the MCP Registry', () => {
  it("is valid against the registry's published schema, and names it", async () => {
    const schema = await json('fixtures/schemas/mcp-registry-server-2025-12-11.schema.json');
    const listing = await json('server.json');
    assert.equal(listing.$schema, schema.$id);
    assert.deepEqual(schemaValidator(schema)(listing), []);
  });

  it('the schema refuses what the registry refuses: a description over 100 characters, a version range, no name', async () => {
    const validate = schemaValidator(await json('fixtures/schemas/mcp-registry-server-2025-12-11.schema.json'));
    const listing: Listing = await json('server.json');
    assert.notDeepEqual(validate({ ...listing, description: 'x'.repeat(101) }), []);
    assert.notDeepEqual(validate({ ...listing, packages: [{ ...listing.packages[0], version: 'latest' }] }), []);
    const { name: _, ...nameless } = listing;
    assert.notDeepEqual(validate(nameless), []);
  });

  it("says what package.json says: mcpName, the npm package's name and version", async () => {
    const pkg = await json('package.json');
    const listing: Listing = await json('server.json');
    assert.equal(pkg.mcpName, listing.name);
    assert.equal(listing.version, pkg.version);
    assert.deepEqual(
      listing.packages.map(({ registryType, identifier, version }) => ({ registryType, identifier, version })),
      [{ registryType: 'npm', identifier: pkg.name, version: pkg.version }],
    );
  });

  it('offers only variables live-mem reads, the API key as a secret', async () => {
    const listing: Listing = await json('server.json');
    const settings = new Set(FIELDS.map((field) => field.env));
    for (const variable of listing.packages[0]?.environmentVariables ?? []) {
      assert.ok(settings.has(variable.name), `${variable.name} is not a setting (src/config/fields.ts)`);
      assert.equal(variable.isSecret === true, /API_KEY/.test(variable.name), variable.name);
    }
  });
});
