import { describe } from './describe.js';
import { isHttpError } from './http-error.js';
import { problemFieldsOf } from './problem-fields.js';
import { defineMember, isUnsafeMember, standardMembers } from './problem-members.js';
import { reasonPhrase } from './status-texts.js';
import type { HttpErrorPayload, ProblemDetails } from './types.js';
import { isAbsoluteUri, isUriReference } from './uri-reference.js';

/** What `toProblem()` cannot learn from the error: where the document is sent from. */
export interface ProblemContext {
    /** An absolute URI that a relative `type` of the error is resolved against (`https://example.com/probs/`). */
    typeBase?: string | null;
    /** The `instance` of an error that has none of its own (the plugin gives the request path). */
    instance?: string | null;
}

/** The members of the classic payload that the problem's own members stand for. */
const classicMembers: ReadonlySet<string> = new Set(['statusCode', 'error', 'message']);

/**
 * The problem document (RFC 9457) of any error, as the `problemDetails` plugin sends it
 * (docs/problem-details.md, "Mapping"): the error's own problem fields over the defaults
 * (`about:blank`, the reason phrase of its status), the message of a 4xx as `detail`, and as
 * extension members what the classic payload already shows beyond `statusCode`, `error` and
 * `message`, then the error's `extensions`. A 5xx's message never appears. A value that is not an
 * HttpError is a 500, as hapi answers it.
 */
export function toProblem(err: unknown, context: ProblemContext = {}): ProblemDetails {
    const typeBase =
        context.typeBase == null ? undefined : checkTypeBase(context.typeBase, 'toProblem() option typeBase');
    let instance: string | undefined;
    if (context.instance != null) {
        if (typeof context.instance !== 'string' || !isUriReference(context.instance)) {
            throw new TypeError(
                `toProblem() option instance must be a URI reference such as /orders/7, got ${describe(context.instance)}`
            );
        }

        instance = context.instance;
    }

    return buildProblem(err, typeBase, instance);
}

/** `toProblem()` with its context already checked (the plugin checks its options once, at registration). */
export function buildProblem(err: unknown, typeBase: string | undefined, instance: string | undefined): ProblemDetails {
    if (!isHttpError(err)) {
        const document: ProblemDetails = { type: 'about:blank', title: reasonPhrase(500), status: 500 };
        if (instance !== undefined) {
            document.instance = instance;
        }

        return document;
    }

    const { statusCode, payload } = err.output;
    const fields = problemFieldsOf(err);
    const document: ProblemDetails = { type: resolveType(fields?.type, typeBase) };
    document.title = fields?.title ?? reasonPhrase(statusCode);
    // The schema of RFC 9457 wants an HTTP status; a hand-edited output may hold something else.
    if (Number.isInteger(statusCode) && statusCode >= 100 && statusCode <= 599) {
        document.status = statusCode;
    }

    const detail = fields?.detail ?? publicMessage(statusCode, payload);
    if (detail !== undefined) {
        document.detail = detail;
    }

    const occurrence = fields?.instance ?? instance;
    if (occurrence !== undefined) {
        document.instance = occurrence;
    }

    // What the classic payload shows besides its three members is public already: hapi's
    // `validation`, a 401's `attributes`, members a handler added to `output.payload`.
    if (typeof payload === 'object' && payload !== null && !Array.isArray(payload)) {
        for (const name of Object.keys(payload)) {
            if (!classicMembers.has(name)) {
                addExtension(document, name, payload[name]);
            }
        }
    }

    if (fields?.extensions !== undefined) {
        for (const name of Object.keys(fields.extensions)) {
            addExtension(document, name, fields.extensions[name]);
        }
    }

    return document;
}

/**
 * Checks a base for relative types: an absolute URI that relative references resolve against
 * (`urn:` and `about:` URIs cannot be one). `who` names the option in the message.
 */
export function checkTypeBase(value: unknown, who: string): string {
    if (typeof value !== 'string' || !isUriReference(value) || !isAbsoluteUri(value) || !URL.canParse('t', value)) {
        throw new TypeError(
            `${who} must be an absolute URI such as https://example.com/probs/, got ${describe(value)}`
        );
    }

    return value;
}

function resolveType(type: string | undefined, typeBase: string | undefined): string {
    if (type === undefined) {
        return 'about:blank';
    }

    // An absolute type is sent as given: URL would normalise its spelling.
    return typeBase === undefined || isAbsoluteUri(type) ? type : new URL(type, typeBase).href;
}

/** The message the classic payload shows for a 4xx (not @hapi/boom's copy of the status text); none for a 5xx. */
function publicMessage(statusCode: number, payload: HttpErrorPayload): string | undefined {
    if (statusCode >= 500 || typeof payload !== 'object' || payload === null) {
        return undefined;
    }

    const { message, error } = payload;
    return typeof message === 'string' && message !== '' && message !== error ? message : undefined;
}

/** An extension member never replaces one of RFC 9457's own, and never takes an unsafe name (`problem-members.ts`). */
function addExtension(document: ProblemDetails, name: string, value: unknown): void {
    if (!standardMembers.has(name) && !isUnsafeMember(name) && value !== undefined) {
        defineMember(document, name, value);
    }
}
