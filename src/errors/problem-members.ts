/**
 * The names of a problem document's members (RFC 9457), one definition for the three places that
 * name them: the fields an error is given (`problem-fields.ts`), the document sent
 * (`problem-document.ts`) and the document read (`problem-reader.ts`).
 */

/** The members of RFC 9457 itself (section 3.1): an extension member cannot take their names. */
export const standardMembers: ReadonlySet<string> = new Set(['type', 'title', 'status', 'detail', 'instance']);

/**
 * Names no document holds: a client that merges the document into an object of its own would change
 * that object's prototype through them (`__proto__` at once, `constructor.prototype` through a deep
 * merge). An error refuses them as extensions, the plugin leaves them out, the reader keeps none.
 */
const unsafeMembers: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype']);

/** True for a name no problem document holds (docs/problem-details.md, "Reading a problem document"). */
export function isUnsafeMember(name: string): boolean {
    return unsafeMembers.has(name);
}

/**
 * Sets a member of a document or of a copied value by definition, not assignment, so that a name
 * such as `__proto__` stays a name and never changes the object's prototype.
 */
export function defineMember(target: object, name: string, value: unknown): void {
    Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}
