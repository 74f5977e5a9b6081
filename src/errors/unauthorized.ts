import { isToken } from '../common/http-token.js';
import {
    assertMessage,
    authAttributes,
    buildHttpError,
    decorateError,
    type HttpError,
    payloadAttributes
} from './http-error.js';
import type { HttpErrorFactoryOptions } from './types.js';

/** `WWW-Authenticate` attributes: values are sent quoted; null and undefined become an empty string. */
export type AuthAttributes = Record<string, string | number | boolean | null | undefined>;

type PayloadAttributes = Record<string, string | number | boolean> | string;

/**
 * 401 Unauthorized (README, "Errors"). With a `scheme` the `WWW-Authenticate` header is set: an
 * attributes object becomes `key="value"` pairs (plus `error="message"`), an attributes string is
 * sent as it is (then no message is allowed). `scheme` may also be a list of complete challenges.
 * A challenge sent without a message marks the error `isMissing`: no credentials were sent at all,
 * which is how hapi's auth tells "try the next strategy" from "wrong credentials". `options` are
 * the problem fields and `cause`, as for every factory.
 */
export function unauthorized<Data = null>(
    message?: string | Error | null,
    scheme?: string | readonly string[] | null,
    attributes?: AuthAttributes | string | null,
    options?: HttpErrorFactoryOptions | null
): HttpError<Data> {
    if (!(message instanceof Error)) {
        // The challenge is built first, so the payload gains its attributes without being built twice.
        const text = assertMessage(message);
        const challenge = buildChallenge(text, scheme, attributes);
        const error = buildHttpError<Data>(401, text, undefined, unauthorized, options);
        if (challenge !== undefined && addChallenge(error, text, challenge)) {
            // Last, as buildPayload puts them: after statusCode, error and message.
            error.output.payload.attributes = payloadAttributes(challenge.attributes!);
        }

        return error;
    }

    // An Error given as the message becomes the 401 itself, as with every other factory; a refused
    // challenge leaves that error as it was.
    const challenge = buildChallenge(message.message, scheme, attributes);
    const error = decorateError<Data>(message, { statusCode: 401 }, unauthorized, options);
    if (challenge !== undefined && addChallenge(error, message.message, challenge)) {
        error.reformat();
    }

    return error;
}

/**
 * Puts `challenge` on the 401 `error` made for `text`: its header, `isMissing`, and the attributes
 * `reformat()` rebuilds the payload from. True when there are attributes, which the caller then
 * puts in the payload.
 */
function addChallenge(error: HttpError<unknown>, text: string, challenge: Challenge): boolean {
    error.output.headers['WWW-Authenticate'] = challenge.header;
    if (!text && challenge.missing) {
        error.isMissing = true;
    }

    if (challenge.attributes === undefined) {
        return false;
    }

    // A symbol key stays out of the keys and the JSON without the cost of a property definition.
    (error as { [authAttributes]?: PayloadAttributes })[authAttributes] = challenge.attributes;
    return true;
}

interface Challenge {
    header: string;
    attributes?: PayloadAttributes;
    /** A challenge of one scheme or of attributes: sent without a message, it means no credentials came. */
    missing: boolean;
}

function buildChallenge(
    message: string | null | undefined,
    scheme: string | readonly string[] | null | undefined,
    attributes: AuthAttributes | string | null | undefined
): Challenge | undefined {
    const hasAttributes = attributes !== undefined && attributes !== null && attributes !== '';
    if (typeof attributes === 'string' && hasAttributes && message) {
        throw new TypeError('unauthorized(): a message cannot be combined with string attributes (rule 3)');
    }

    if (!scheme || scheme.length === 0) {
        if (!hasAttributes) {
            return undefined;
        }

        // Rule 5: attributes alone still set the header, which only a string can form (a whole challenge).
        if (typeof attributes !== 'string') {
            throw new TypeError(
                'unauthorized(): an attributes object needs a scheme to form the WWW-Authenticate header'
            );
        }

        return { header: assertHeaderSafe(attributes, 'attributes'), attributes, missing: true };
    }

    if (typeof scheme !== 'string') {
        if (hasAttributes) {
            throw new TypeError('unauthorized(): attributes cannot be combined with a list of challenges');
        }

        // A list of whole challenges is what hapi sends once every strategy found nothing: not itself "missing".
        return {
            header: scheme.map((entry, index) => assertHeaderSafe(entry, `scheme[${index}]`)).join(', '),
            missing: false
        };
    }

    assertHeaderSafe(scheme, 'scheme');
    if (typeof attributes === 'string' && hasAttributes) {
        return { header: `${scheme} ${assertHeaderSafe(attributes, 'attributes')}`, attributes, missing: true };
    }

    const pairs: string[] = [];
    const payload: Record<string, string | number | boolean> = {};
    for (const [name, raw] of Object.entries(typeof attributes === 'object' && attributes !== null ? attributes : {})) {
        assertToken(name);
        const value = raw ?? '';
        pairs.push(`${name}="${quote(String(value), `attribute ${name}`)}"`);
        payload[name] = value;
    }

    if (message) {
        pairs.push(`error="${quote(message, 'message')}"`);
        payload.error = message;
    }

    return pairs.length === 0
        ? { header: scheme, missing: true }
        : { header: `${scheme} ${pairs.join(', ')}`, attributes: payload, missing: true };
}

/** The characters a quoted-string carries as they are: no control character, no `"` or `\\` to escape. */
const plainQuotedText = /^[\t\x20\x21\x23-\x5b\x5d-\x7e\x80-\xff]*$/;

/** Escapes a quoted-string value (RFC 9110 5.6.4). */
function quote(value: string, name: string): string {
    // The common value needs no escape: one test instead of a check and a replace.
    if (typeof value === 'string' && plainQuotedText.test(value)) {
        return value;
    }

    return assertHeaderSafe(value, name).replace(/[\\"]/g, '\\$&');
}

/** Node refuses these characters in a header at send time; refusing them here names the culprit. */
function assertHeaderSafe(value: string, name: string): string {
    if (typeof value !== 'string') {
        throw new TypeError(`unauthorized(): ${name} must be a string`);
    }

    const bad = /[^\t\x20-\x7e\x80-\xff]/.exec(value);
    if (bad) {
        const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
        const kind = bad[0] < '\x80' ? 'a control character' : 'a character beyond U+00FF';
        throw new TypeError(`unauthorized(): ${name} contains ${kind} (U+${code}) that cannot go in a header`);
    }

    return value;
}

/** Attribute names are sent unquoted, so they must be RFC 9110 tokens. */
function assertToken(name: string): void {
    if (!isToken(name)) {
        throw new TypeError(`unauthorized(): attribute name ${JSON.stringify(name)} is not a valid header token`);
    }
}
