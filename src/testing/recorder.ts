import { appendFileSync, writeFileSync } from 'node:fs';
import type { PayloadReplay } from '../client/bodies/payload-replay.js';
import type { CodedError } from '../client/contract/errors.js';
import type { HopRequest, HopResponse, ProgressCallback } from '../client/contract/types.js';
import type { Exchange, ExchangeHop, StandInTransport, Transport } from '../client/wire/transport.js';
import type { HttpError } from '../errors/index.js';
import { installForProcess, uninstallFromProcess } from './install.js';
import { bodyFields, defaultRedactions, lineOf, type RecordedExchange, recordedHeaders } from './recording.js';
import type { MockFault, MockFaultDetails, TlsFailureCode } from './types.js';

/** What a recorder is told. */
export interface RecorderOptions {
    /** The headers recorded without their values (request and response alike, any case). Default `authorization`, `cookie`, `set-cookie`. */
    redact?: readonly string[] | undefined;
}

/**
 * Records a session with real origins (docs/testing.md, "Record and replay"): given to a client (the
 * `mock` option) or installed for the process, it sends every hop to the network as the client would
 * and writes each exchange to `path` as a line of JSON (recording.ts) once it is over: the request, and
 * the response with its body as it came (still compressed when it was), or the network's fault.
 * `replayFrom(path)` plays it back. The file is emptied when the recorder is made.
 */
export class Recorder implements StandInTransport {
    private readonly redactions: ReadonlySet<string>;
    private readonly open = new Set<HopRecord>();
    private count = 0;
    private readonly sink: RecordSink = {
        redacted: (headers) => recordedHeaders(headers, this.redactions),
        write: (record, exchange) => {
            if (this.open.delete(record) && exchange !== undefined) {
                appendFileSync(this.path, lineOf(exchange));
                this.count++;
            }
        }
    };

    constructor(
        readonly path: string,
        options: RecorderOptions = {}
    ) {
        this.redactions = new Set((options.redact ?? defaultRedactions).map((name) => name.toLowerCase()));
        writeFileSync(path, '');
    }

    /** The exchanges written so far. */
    get recorded(): number {
        return this.count;
    }

    /** Records for every client of the process that has no `mock` of its own; throws when another mock or recorder is installed. */
    install(): this {
        installForProcess(this, 'recorder');
        return this;
    }

    uninstall(): void {
        uninstallFromProcess(this);
    }

    /** Uninstalls it, and writes the exchanges whose response was not read to its end with what came of it. */
    close(): void {
        this.uninstall();
        for (const record of [...this.open]) {
            record.flush();
        }
    }

    /** The client's way in (src/client/wire/transport.ts, `StandInTransport`); not for callers. */
    openExchange(hop: ExchangeHop, _http2: boolean, network: Transport): Exchange {
        const record = new HopRecord(hop, this.sink);
        this.open.add(record);
        try {
            record.exchange = network.open(record);
        } catch (err) {
            // The request could not be made (a header the runtime refuses): nothing went out.
            this.open.delete(record);
            throw err;
        }

        return record;
    }
}

/** Where a hop's record goes: its headers redacted, its line written once it is over (none: nothing to record). */
interface RecordSink {
    redacted(headers: Parameters<typeof recordedHeaders>[0]): Record<string, string | string[]>;
    write(record: HopRecord, exchange: RecordedExchange | undefined): void;
}

/**
 * One hop recorded: the hop the network's exchange reports to, and the exchange the hop drives, each
 * passing everything on and noting what the line needs.
 */
class HopRecord implements ExchangeHop, Exchange {
    exchange!: Exchange;
    private request_: RecordedExchange['request'] | undefined;
    private response: HopResponse | undefined;
    private readonly chunks: Buffer[] = [];

    constructor(
        private readonly hop: ExchangeHop,
        private readonly recorder: RecordSink
    ) {}

    // The hop's side, for the network's exchange.

    get method() {
        return this.hop.method;
    }

    get destination() {
        return this.hop.destination;
    }

    get headers() {
        return this.hop.headers;
    }

    get options() {
        return this.hop.options;
    }

    get proxy() {
        return this.hop.proxy;
    }

    get scope() {
        return this.hop.scope;
    }

    get agents() {
        return this.hop.agents;
    }

    get moments() {
        return this.hop.moments;
    }

    responded(res: HopResponse): void {
        this.response = res;
        // Every byte of the body passes through push() (the HTTP parser's, or the HTTP/2 stream's):
        // noted as it comes, before any decoding, without taking the body from its reader.
        const push = res.push;
        res.push = (chunk: unknown, encoding?: BufferEncoding) => {
            if (Buffer.isBuffer(chunk)) {
                this.chunks.push(chunk);
            }

            return push.call(res, chunk, encoding);
        };
        res.once('end', () => this.flush());
        res.once('close', () => this.flush());
        this.hop.responded(res);
    }

    failed(err: HttpError): void {
        const fault = faultOf(err);
        this.recorder.write(this, fault === undefined ? undefined : { request: this.requestRecord(), ...fault });
        this.hop.failed(err);
    }

    uploadFailed(err: HttpError): void {
        this.hop.uploadFailed(err);
    }

    // The exchange's side, for the hop.

    get request(): HopRequest {
        return this.exchange.request;
    }

    get reused(): boolean {
        return this.exchange.reused;
    }

    responseBytes(): number {
        return this.exchange.responseBytes();
    }

    sendBody(body: string | Buffer | undefined, onProgress: ProgressCallback | undefined): void {
        this.request_ = {
            method: this.hop.method,
            url: this.hop.destination.href,
            headers: this.recorder.redacted(this.hop.headers),
            ...(body === undefined ? {} : bodyFields(Buffer.from(body), undefined))
        };
        this.exchange.sendBody(body, onProgress);
    }

    sendStream(replay: PayloadReplay, onProgress: ProgressCallback | undefined): void {
        this.request_ = {
            method: this.hop.method,
            url: this.hop.destination.href,
            headers: this.recorder.redacted(this.hop.headers),
            streamed: true
        };
        this.exchange.sendStream(replay, onProgress);
    }

    refusalOf(res: HopResponse): HttpError | undefined {
        return this.exchange.refusalOf(res);
    }

    cancel(): void {
        // The caller's cancel or a timeout: nothing of the origin's to record.
        this.recorder.write(this, undefined);
        this.exchange.cancel();
    }

    retireIdlePeers(): void {
        this.exchange.retireIdlePeers();
    }

    /** Writes the exchange with what came of its response: whole, or cut when it ended with an error. */
    flush(): void {
        const res = this.response;
        if (res === undefined) {
            this.recorder.write(this, undefined);
            return;
        }

        const body = Buffer.concat(this.chunks);
        this.recorder.write(this, {
            request: this.requestRecord(),
            response: {
                status: res.statusCode as number,
                httpVersion: res.httpVersion,
                headers: this.recorder.redacted(res.headers),
                ...bodyFields(body, res.headers['content-encoding']),
                ...(res.errored ? { cut: true as const } : {})
            }
        });
    }

    private requestRecord(): RecordedExchange['request'] {
        return this.request_ ?? { method: this.hop.method, url: this.hop.destination.href, headers: {} };
    }
}

const tlsCodes = new Set<string>([
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'CERT_HAS_EXPIRED'
]);

/** The fault a failure before any response records as, when it is one a mock can play; undefined otherwise. */
function faultOf(err: HttpError): { fault: MockFault; faultDetails?: MockFaultDetails } | undefined {
    const cause = err.data as (CodedError & { http2?: { session?: { errorCode?: number } } }) | null;
    const code = cause?.code;
    if (code === 'ECONNREFUSED') {
        return { fault: 'connection-refused' };
    }

    if (code === 'ECONNRESET' || code === 'ERR_HTTP2_STREAM_CLOSED') {
        return { fault: 'connection-reset' };
    }

    if (code !== undefined && tlsCodes.has(code)) {
        return { fault: 'tls', faultDetails: { code: code as TlsFailureCode } };
    }

    if (code === 'ERR_HTTP2_REFUSED_STREAM') {
        return { fault: 'refused-stream' };
    }

    if (code === 'ERR_HTTP2_GOAWAY') {
        // The stream ids of a replay are its own: the GOAWAY is replayed as leaving its stream unprocessed.
        return { fault: 'goaway', faultDetails: { errorCode: cause?.http2?.session?.errorCode } };
    }

    return undefined;
}
