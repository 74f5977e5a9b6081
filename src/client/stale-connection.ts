import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpError } from '../errors/index.js';
import { type CodedError, requestError } from './errors.js';

/**
 * The re-send of a request that failed on a kept-alive connection the server had just closed (the
 * README's "Stale connections"). Go's net/http transport is the model: the client chose to reuse
 * that connection, so the failure is the client's to absorb, once, when nothing of the response
 * came back and sending the request again cannot do anything the caller did not ask for.
 */

/** Why a hop is a re-send of the one before it: `uri.resendReason` in the event pipeline. */
export type ResendReason = 'stale-connection';

// The methods whose repetition the caller cannot tell from one request (RFC 9110 9.2.2).
const idempotentMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

// What a write to, or a read from, a connection the peer closed while it sat idle gives.
const closedConnectionCodes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);

// The bytes the socket had read when the hop got it: anything more at the failure is the response begun.
const bytesReadAtStart = Symbol('tracewire.bytesReadAtStart');
type TrackedRequest = ClientRequest & { [bytesReadAtStart]?: number };

/** Call on every hop's request: notes where its response would begin on a reused connection. */
export function trackReusedSocket(req: ClientRequest): void {
    req.once('socket', noteBytesRead);
}

function noteBytesRead(this: TrackedRequest, socket: Socket): void {
    if (this.reusedSocket) {
        this[bytesReadAtStart] = socket.bytesRead;
    }
}

/**
 * True when the method (or the caller, with an `Idempotency-Key` or `X-Idempotency-Key` header, as
 * Go decides it) makes a second copy of the request harmless.
 */
export function isIdempotent(method: string, req: ClientRequest): boolean {
    return idempotentMethods.has(method) || req.hasHeader('idempotency-key') || req.hasHeader('x-idempotency-key');
}

/** What the flow knows of a hop that failed before its response. */
export interface FailedHop {
    readonly req: ClientRequest;
    readonly err: HttpError;
    readonly method: string;
    /** True when the payload (none, a string, a Buffer, or a stream with its copy) can be sent again. */
    readonly replayable: boolean;
    /** True when this hop is already the re-send of a stale connection's failure. */
    readonly resent: boolean;
}

/**
 * The reason to send the hop again at once, or undefined when its failure stands: the connection was
 * reused, the server closed it (reset, broken pipe) before a single byte of the response, the request
 * is idempotent and its payload can be sent again, and this is not already the re-send.
 */
export function staleResendReason(hop: FailedHop): ResendReason | undefined {
    const { req, err } = hop;
    if (hop.resent || !req.reusedSocket || err.typeof !== requestError) {
        return undefined;
    }

    const code = (err.data as CodedError | null)?.code;
    if (code === undefined || !closedConnectionCodes.has(code)) {
        return undefined;
    }

    const before = (req as TrackedRequest)[bytesReadAtStart];
    const socket = req.socket;
    if (before === undefined || (socket !== null && socket.bytesRead !== before)) {
        return undefined;
    }

    return hop.replayable && isIdempotent(hop.method, req) ? 'stale-connection' : undefined;
}
