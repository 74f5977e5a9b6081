import { authAttributes, HttpError } from './http-error.js';

/** `WWW-Authenticate` attributes: values are sent quoted; null and undefined become an empty string. */
export type AuthAttributes = Record<string, string | number | boolean | null | undefined>;

/**
 * 401 Unauthorized (spec 4.B rules 1–5). With a `scheme` the `WWW-Authenticate` header is set: an
 * attributes object becomes `key="value"` pairs (plus `error="message"`), an attributes string is
 * sent as it is (then no message is allowed). `scheme` may also be a list of complete challenges.
 * Attributes without a message mark the error `isMissing`: no credentials were sent at all.
 */
export function unauthorized<Data = null>(
    message?: string | null,
    scheme?: string | readonly string[] | null,
    attributes?: AuthAttributes | string | null
): HttpError<Data> {
    const error = new HttpError<Data>(message, { statusCode: 401, ctor: unauthorized });
    if (!scheme) {
        return error;
    }

    if (typeof scheme !== 'string') {
        error.output.headers['WWW-Authenticate'] = scheme.join(', ');
        return error;
    }

    let challenge = scheme;
    let payloadAttributes: Record<string, string> | string | undefined;
    if (typeof attributes === 'string') {
        if (message) {
            throw new TypeError('unauthorized(): a message cannot be combined with string attributes (rule 3)');
        }

        assertHeaderSafe(attributes, 'attributes');
        challenge = `${scheme} ${attributes}`;
        payloadAttributes = attributes;
    } else {
        const pairs: string[] = [];
        const object: Record<string, string> = {};
        for (const [name, raw] of Object.entries(attributes ?? {})) {
            const value = raw === null || raw === undefined ? '' : String(raw);
            pairs.push(`${name}="${quote(value, name)}"`);
            object[name] = value;
        }

        if (message) {
            pairs.push(`error="${quote(message, 'message')}"`);
            object.error = message;
        }

        if (pairs.length > 0) {
            challenge = `${scheme} ${pairs.join(', ')}`;
            payloadAttributes = object;
        }
    }

    if (attributes && !message) {
        Object.defineProperty(error, 'isMissing', { value: true, writable: true, configurable: true });
    }

    error.output.headers['WWW-Authenticate'] = challenge;
    if (payloadAttributes !== undefined) {
        Object.defineProperty(error, authAttributes, { value: payloadAttributes, configurable: true });
        error.reformat();
    }

    return error;
}

/** Escapes a quoted-string value (RFC 9110 5.6.4); control characters would split the header, so they are refused. */
function quote(value: string, name: string): string {
    assertHeaderSafe(value, name);
    return value.replace(/[\\"]/g, '\\$&');
}

function assertHeaderSafe(value: string, name: string): void {
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are exactly what is refused
    if (/[\u0000-\u0008\u000a-\u001f\u007f]/.test(value)) {
        throw new TypeError(`unauthorized(): ${name} contains a control character that cannot go in a header`);
    }
}
