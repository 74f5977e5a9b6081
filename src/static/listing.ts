import type { Request, ResponseObject, ResponseToolkit } from '@hapi/hapi';
import type { DirectoryEntry } from './fs.js';

/** One entry of the JSON listing. */
export interface ListingEntry {
    name: string;
    type: 'file' | 'directory';
    size: number;
    /** Modification time, ISO 8601. */
    mtime: string;
}

/**
 * The listing of a directory: HTML for browsers, JSON (name, type, size, mtime of each entry) for a
 * client that prefers `application/json`. `basePath` is the request path made safe for links
 * (`sameOriginPath`); `entries` are already filtered of hidden names.
 */
export function listingResponse(
    request: Request,
    h: ResponseToolkit,
    basePath: string,
    displayPath: string,
    entries: DirectoryEntry[]
): ResponseObject {
    const sorted = [...entries].sort(compareEntries);
    const response = prefersJson(typeof request.headers.accept === 'string' ? request.headers.accept : undefined)
        ? h.response(sorted.map(toListingEntry))
        : h.response(renderHtml(basePath, displayPath, sorted)).type('text/html; charset=utf-8');
    return response.vary('accept');
}

/** Directories first, then by name, so the listing is stable whatever order the OS returns. */
function compareEntries(a: DirectoryEntry, b: DirectoryEntry): number {
    if (a.isDirectory !== b.isDirectory) {
        return a.isDirectory ? -1 : 1;
    }

    // Names within one directory are unique, so they never compare equal.
    return a.name < b.name ? -1 : 1;
}

function toListingEntry(entry: DirectoryEntry): ListingEntry {
    return {
        name: entry.name,
        type: entry.isDirectory ? 'directory' : 'file',
        size: entry.size,
        mtime: entry.mtime.toISOString()
    };
}

function renderHtml(basePath: string, displayPath: string, entries: DirectoryEntry[]): string {
    // Links are absolute so they work whether or not the request path ends with a slash.
    const base = basePath.endsWith('/') ? basePath : `${basePath}/`;
    const title = escapeHtml(`/${displayPath}`);
    const items = entries.map((entry) => {
        const suffix = entry.isDirectory ? '/' : '';
        const href = escapeHtml(`${base}${encodeURIComponent(entry.name)}${suffix}`);
        return `<li><a href="${href}">${escapeHtml(entry.name + suffix)}</a></li>`;
    });
    if (displayPath !== '') {
        items.unshift(`<li><a href="${escapeHtml(`${base}../`)}">../</a></li>`);
    }

    return [
        '<!DOCTYPE html>',
        '<html>',
        `<head><meta charset="utf-8"><title>${title}</title></head>`,
        '<body>',
        `<h1>Directory: ${title}</h1>`,
        `<ul>${items.join('')}</ul>`,
        '</body>',
        '</html>'
    ].join('\n');
}

const htmlEscapes: Record<string, string> = {
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&quot;',
    "'": '&#39;'
};

/** File names are untrusted: a file named `<script>` must show as text, never run. */
export function escapeHtml(value: string): string {
    return value.replace(/[&<>"']/g, (char) => htmlEscapes[char]!);
}

/**
 * True when the `accept` header ranks JSON above HTML: by q-value, then by how specifically the
 * media range names it (`application/json` over `application/*` over a wildcard), then by order.
 */
export function prefersJson(accept: string | undefined): boolean {
    if (!accept) {
        return false;
    }

    const json = rank(accept, 'application', 'json');
    const html = rank(accept, 'text', 'html');
    if (json.q !== html.q) {
        return json.q > html.q;
    }

    if (json.q === 0) {
        return false;
    }

    if (json.specificity !== html.specificity) {
        return json.specificity > html.specificity;
    }

    return json.position < html.position;
}

interface Rank {
    q: number;
    specificity: number;
    position: number;
}

function rank(accept: string, type: string, subtype: string): Rank {
    let best: Rank = { q: 0, specificity: -1, position: Number.POSITIVE_INFINITY };
    const ranges = accept.split(',');
    for (let position = 0; position < ranges.length; ++position) {
        const [range = '', ...params] = ranges[position]!.split(';');
        const [rangeType = '', rangeSubtype = ''] = range.trim().toLowerCase().split('/');
        let specificity: number;
        if (rangeType === type && rangeSubtype === subtype) {
            specificity = 2;
        } else if (rangeType === type && rangeSubtype === '*') {
            specificity = 1;
        } else if (rangeType === '*' && rangeSubtype === '*') {
            specificity = 0;
        } else {
            continue;
        }

        if (specificity > best.specificity) {
            best = { q: qValue(params), specificity, position };
        }
    }

    return best;
}

function qValue(params: string[]): number {
    for (const param of params) {
        const [key = '', value = ''] = param.split('=');
        if (key.trim().toLowerCase() === 'q') {
            const q = Number(value.trim());
            return Number.isNaN(q) ? 0 : q;
        }
    }

    return 1;
}
