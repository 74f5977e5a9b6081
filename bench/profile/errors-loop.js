// A focused loop for `node --cpu-prof`: makes one kind of error for a few seconds.
// Usage: node --cpu-prof --cpu-prof-dir=bench/profile/out bench/profile/errors-loop.js <case> [tracewire|boom]
// Cases: notFound, badImplementation, unauthorized, toHttpError, HttpError.
import Boom from '@hapi/boom';
import { errors } from 'tracewire';

const makers = {
    tracewire: {
        notFound: () => errors.notFound('x'),
        badImplementation: () => errors.badImplementation('x'),
        unauthorized: () => errors.unauthorized('x', 'Bearer', { realm: 'a' }),
        toHttpError: () => errors.toHttpError(new Error('x')),
        HttpError: () => new errors.HttpError('x', { statusCode: 418 })
    },
    boom: {
        notFound: () => Boom.notFound('x'),
        badImplementation: () => Boom.badImplementation('x'),
        unauthorized: () => Boom.unauthorized('x', 'Bearer', { realm: 'a' }),
        toHttpError: () => Boom.boomify(new Error('x')),
        HttpError: () => new Boom.Boom('x', { statusCode: 418 })
    }
};

const [caseName = 'notFound', library = 'tracewire', seconds = '4'] = process.argv.slice(2);
const make = makers[library]?.[caseName];
if (!make) {
    throw new Error(`Unknown case ${library}/${caseName}: cases are ${Object.keys(makers.tracewire).join(', ')}`);
}

const sink = new Array(16);
const deadline = process.hrtime.bigint() + BigInt(Number(seconds) * 1e9);
let count = 0;
while (process.hrtime.bigint() < deadline) {
    for (let i = 0; i < 1000; i++) {
        sink[i & 15] = make();
    }

    count += 1000;
}

console.log(`${library} ${caseName}: ${((count / Number(seconds)) | 0).toLocaleString('en')} ops/s`);
