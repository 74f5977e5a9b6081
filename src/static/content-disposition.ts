/** Whether and how a `content-disposition` header is sent (README, "Static files"). */
export type DispositionMode = false | 'attachment' | 'inline';

// Control characters cannot appear in a header value at all.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const controlCharacters = /[\u0000-\u001f\u007f]/g;
const nonAscii = /[^\u0020-\u007e]/g;
const hasNonAscii = /[^\u0020-\u007e]/;

/**
 * The `content-disposition` value for `filename`: a quoted ASCII `filename` every client reads and,
 * when the name is not plain ASCII, an RFC 5987 `filename*` that carries it exactly in UTF-8.
 */
export function formatContentDisposition(mode: 'attachment' | 'inline', filename: string): string {
    const clean = filename.replace(controlCharacters, '');
    const fallback = clean.replace(nonAscii, '_').replace(/["\\]/g, '\\$&');
    const value = `${mode}; filename="${fallback}"`;
    if (!hasNonAscii.test(clean)) {
        return value;
    }

    return `${value}; filename*=UTF-8''${encodeRfc5987(clean)}`;
}

/** Percent-encodes everything outside RFC 5987 `attr-char`, which `encodeURIComponent` leaves a few of. */
function encodeRfc5987(value: string): string {
    return encodeURIComponent(value).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
