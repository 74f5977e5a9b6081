import type { Request, ResponseToolkit, Server } from '@hapi/hapi';
import type { HapiPlugin } from '../common/hapi-plugin.js';
import { type MediaType, ranksAbove } from '../common/media-range.js';
import { describe } from './describe.js';
import { type HttpError, isHttpError } from './http-error.js';
import { buildProblem, checkTypeBase } from './problem-document.js';
import { problemJsonRange, problemJsonType } from './problem-media-type.js';
import type { HttpErrorHeaders, HttpErrorPayload, ProblemDetails, ProblemDetailsOptions } from './types.js';
import { encodePath, isUriReference } from './uri-reference.js';

/**
 * The plugin's name, which is also where it notes the problem document it sent for a request
 * (`request.plugins[PROBLEM_DETAILS_PLUGIN]`), for the tracing plugin (`span-attributes.ts`).
 */
export const PROBLEM_DETAILS_PLUGIN = 'tracewire-problem-details';

/** What the plugin notes of the problem document it sent: the `type` both sides of a trace can name. */
export interface SentProblem {
    readonly type: string;
}

/**
 * The problem-details plugin for hapi (docs/problem-details.md): every error response (an
 * HttpError, hapi's own errors, a failed validation, the static plugin's) is answered as an
 * `application/problem+json` document (RFC 9457) when the request prefers it, or always with
 * `mode: 'always'`; otherwise with the classic payload, unchanged. Register it with
 * `await server.register({ plugin: problemDetails, options })`; the options are checked then.
 */
export const problemDetails: HapiPlugin<ProblemDetailsOptions> = {
    name: PROBLEM_DETAILS_PLUGIN,
    register(server: Server, options: ProblemDetailsOptions) {
        const settings = readOptions(options);
        server.ext('onPreResponse', (request: Request, h: ResponseToolkit) => answerError(request, h, settings));
    }
};

interface Settings {
    negotiate: boolean;
    typeBase: string | undefined;
    instanceFromPath: boolean;
}

const classicJson: MediaType = { type: 'application', subtype: 'json' };

/** The options are checked when the plugin is registered: a mistake is a TypeError naming the option. */
function readOptions(options: ProblemDetailsOptions | null | undefined): Settings {
    const given: unknown = options ?? {};
    if (typeof given !== 'object' || given === null || Array.isArray(given)) {
        throw new TypeError(
            `problemDetails options must be an object such as { mode: 'always' }, got ${describe(given)}`
        );
    }

    const { mode, typeBase, instanceFromPath, ...unknown } = given as ProblemDetailsOptions;
    const unknownKeys = Object.keys(unknown);
    if (unknownKeys.length > 0) {
        throw new TypeError(
            `problemDetails has unknown option(s) ${unknownKeys.join(', ')}; the options are mode, typeBase and instanceFromPath`
        );
    }

    if (mode != null && mode !== 'negotiate' && mode !== 'always') {
        throw new TypeError(`problemDetails option mode must be 'negotiate' or 'always', got ${describe(mode)}`);
    }

    if (instanceFromPath != null && typeof instanceFromPath !== 'boolean') {
        throw new TypeError(
            `problemDetails option instanceFromPath must be a boolean, got ${describe(instanceFromPath)}`
        );
    }

    return {
        negotiate: mode !== 'always',
        typeBase: typeBase == null ? undefined : checkTypeBase(typeBase, 'problemDetails option typeBase'),
        instanceFromPath: instanceFromPath ?? true
    };
}

/**
 * The `onPreResponse` step. The response stays an error, for the extensions after this one (a
 * 404 page, the span annotation), for hapi's log of a 500 and for the tracing plugin, which reads
 * it after transmission: an object whose prototype is the error, so message, stack, data and
 * flags are the error's own, with an `output` of its own. The error itself is left untouched, since
 * one instance may be thrown for many requests (a shared rejected promise, a module-level error).
 */
function answerError(request: Request, h: ResponseToolkit, settings: Settings): symbol {
    const error: unknown = request.response;
    if (!isHttpError(error)) {
        return h.continue;
    }

    const { headers, payload } = error.output;
    const accept: unknown = request.headers.accept;
    // A client that names both types at one q-value reads both: tracewire's helpers with `json` send
    // `application/json, application/problem+json` (docs/problem-details.md, "Which clients get a problem document").
    if (
        settings.negotiate &&
        !ranksAbove(typeof accept === 'string' ? accept : undefined, problemJsonRange, classicJson, 'named')
    ) {
        // The classic payload as it is; the headers say the answer depended on `accept`.
        replaceError(request, withOutput(error, payload, varyOnAccept({ ...headers })));
        return h.continue;
    }

    const instance = settings.instanceFromPath ? pathInstance(request.path) : undefined;
    const document = buildProblem(error, settings.typeBase, instance);
    const sent: SentProblem = { type: document.type };
    (request.plugins as { [PROBLEM_DETAILS_PLUGIN]?: SentProblem })[PROBLEM_DETAILS_PLUGIN] = sent;

    const problemHeaders = withoutHeader({ ...headers }, 'content-type');
    problemHeaders['content-type'] = problemJsonType;
    replaceError(
        request,
        withOutput(error, document, settings.negotiate ? varyOnAccept(problemHeaders) : problemHeaders)
    );
    return h.continue;
}

/**
 * Puts `answer` in place of the error response. Returning it from the extension would be hapi's
 * documented way, but hapi runs no further `onPreResponse` extension once one returns an error, so
 * every extension registered after this plugin would be skipped. Replacing one error with another
 * is what hapi's own `_setResponse` does for it (nothing to close); the tests pin that the later
 * extensions run and see it, and that hapi logs and transmits it.
 */
function replaceError(request: Request, answer: Error): void {
    (request as { response: unknown }).response = answer;
}

function withOutput(error: HttpError, payload: HttpErrorPayload | ProblemDetails, headers: HttpErrorHeaders): Error {
    const answer = Object.create(error) as HttpError;
    const output = { statusCode: error.output.statusCode, payload, headers };
    Object.defineProperty(answer, 'output', { value: output, enumerable: true, writable: true, configurable: true });
    return answer;
}

/** `headers` with `accept` added to its `vary`, whatever the case of the name it had. */
function varyOnAccept(headers: HttpErrorHeaders): HttpErrorHeaders {
    const name = Object.keys(headers).find((key) => key.toLowerCase() === 'vary');
    if (name === undefined) {
        headers.vary = 'accept';
        return headers;
    }

    const vary = String(headers[name]);
    delete headers[name];
    const listed = vary.split(',').map((token) => token.trim().toLowerCase());
    if (vary.trim() === '') {
        headers.vary = 'accept';
    } else if (listed.includes('accept') || listed.includes('*')) {
        headers.vary = vary;
    } else {
        headers.vary = `${vary}, accept`;
    }

    return headers;
}

function withoutHeader(headers: HttpErrorHeaders, lowerCaseName: string): HttpErrorHeaders {
    for (const key of Object.keys(headers)) {
        if (key.toLowerCase() === lowerCaseName) {
            delete headers[key];
        }
    }

    return headers;
}

/** The request path as a URI reference, or none when even encoded it is not one (an unparsable target). */
function pathInstance(path: unknown): string | undefined {
    if (typeof path !== 'string' || path === '') {
        return undefined;
    }

    const encoded = encodePath(path);
    return isUriReference(encoded) ? encoded : undefined;
}
