/** The safe methods (RFC 9110 9.2.1): the only ones a cache may answer or store, and those that invalidate nothing. */
const safeMethods: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE']);

/** True for a safe method, given in upper case. */
export function isSafeMethod(method: string): boolean {
    return safeMethods.has(method);
}
