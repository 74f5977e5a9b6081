import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';

/**
 * The JSON schema of RFC 9457's Appendix A (fixtures/rfc9457-problem.schema.json, as the RFC
 * prints it), compiled by ajv with the `uri-reference` format checked: every problem document the
 * tests see is held to it.
 */
const schema = JSON.parse(readFileSync(new URL('./fixtures/rfc9457-problem.schema.json', import.meta.url), 'utf8'));
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats.default(ajv, ['uri-reference']);
const validate = ajv.compile(schema);

/** Fails the test, with ajv's report, when `document` does not satisfy the schema of RFC 9457. */
export function expectValidProblem(document: unknown): void {
    const valid = validate(document);
    expect(valid ? [] : validate.errors, `not an RFC 9457 problem document: ${JSON.stringify(document)}`).toStrictEqual(
        []
    );
}

/** The schema's own answer, for tests that show a document is refused by it. */
export function isValidProblem(document: unknown): boolean {
    return validate(document) === true;
}
